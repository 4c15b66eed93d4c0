// How a message names what it lists when the list may be long (leases not compared within a
// budget, tasks not planned apart, agents of a build): the first few, then how many more; and a
// pattern of up to 4,096 characters shown by its start.

/** The first `n` of `items`, joined by ", ", then " and N more" for the rest. */
export function namedFew(items: string[], n: number): string {
  return items.slice(0, n).join(", ") + (items.length > n ? ` and ${items.length - n} more` : "");
}

/** `s` cut to its first `max` characters, `…` marking a cut. */
export function clipped(s: string, max = 60): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
