// The lease tree's format numbers and where a lease set becomes a tree: what the rest of the store
// asks of lease-tree.ts without writing or reading a tree (ref families, a received record's
// check, the lease store's choice of format), in a module of their own, so that lease-tree.ts is
// set up in a bundle only when a tree is written or read (scripts/lazy-ours.mjs).

export const LEASE_TREE_FORMAT = 3;
/**
 * The first tree format: one prefix file per first folder, however many leases it holds (a
 * repository whose code is all under src/ had one file of every lease, rewritten by every claim).
 * Read, and written over in format 3 by the next write.
 */
export const LEASE_TREE_FORMAT_V2 = 2;
/** The folder of prefix files in a tree-format (2 or 3) commit's tree. */
export const LEASE_FOLDER = "leases";
/** From this many leases on, a write stores the set as a tree. */
export const LEASE_TREE_AT = 64;
