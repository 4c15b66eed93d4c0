// Seeded random number generators for the randomized tests: each returns the next number in
// [0, 1). A failure names its seed, and the same seed gives the same run. Each test keeps the
// generator it was written with: a fixed seed's sequence is part of what the test covers
// (hooks-fast-property-edits.test.ts's coverage checks hold for its seed's sequence), so these are
// the exact formulas the test files had, gathered here rather than copied.

/** mulberry32, with the helpers a scenario generator wants. */
export function mulberry32(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}

/** The 32-bit linear congruential generator of Numerical Recipes (modulo 2^32). */
export function lcg32(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/**
 * The C standard's example generator modulo 2^31, in floating point: the product passes 2^53, so
 * its low bits are not C's, but the sequence is the same for a seed on every run, which is all a
 * test needs of it.
 */
export function ansiLcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** Marsaglia's xorshift32 (a zero seed becomes 1: zero would stay zero). */
export function xorshift32(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}
