// What the loose object check asks of the pack reader, in a module of its own, so that
// pack-read.ts is set up in a bundle only when a pack is read (scripts/lazy-ours.mjs).

/** Bounds on one pack read in process (a sync brings records of a few hundred bytes). */
export const PACK_LIMITS = { objects: 20_000, objectBytes: 64 * 1024 * 1024, totalBytes: 256 * 1024 * 1024, chain: 1000 };
