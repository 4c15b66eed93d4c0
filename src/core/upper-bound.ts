// Where an item goes in a sorted list: the binary search behind every "put it in place instead of
// sorting again" (a lease set, the claimed tasks). Pure.

/** The index in `sorted[from..]` (ordered by `order`) after every element not greater than `item`. */
export function upperBound<T>(sorted: readonly T[], item: T, order: (a: T, b: T) => number, from = 0): number {
  let lo = from;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order(sorted[mid]!, item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
