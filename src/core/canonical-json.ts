// JSON with every object's keys sorted: equal for the same content whatever order its writer put
// the keys in (two builds, a hand edit, a record rebuilt from a cache) or its spacing.

export function canonicalJson(v: unknown): string {
  const sort = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sort) : x && typeof x === "object" ? Object.fromEntries(Object.keys(x as object).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])])) : x;
  return JSON.stringify(sort(v));
}
