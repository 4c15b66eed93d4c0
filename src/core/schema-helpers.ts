// zod/mini keeps the hot paths (hooks, one-shot CLI calls) cheap to start: the full zod build
// costs ~30 ms of start-up on this machine, mini ~3 ms.
import * as z from "zod/mini";

export const isoTime = () => z.iso.datetime();
export const boundedText = (max: number) => z.string().check(z.maxLength(max));
export const count = () => z.int().check(z.nonnegative());

/** Formats a zod failure as one line: `field.path: problem; other: problem`. */
export function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join(".") : "(record)"}: ${issueText(i)}`)
    .join("; ");
}

/**
 * zod/mini ships no messages (a locale costs start-up), so every issue reads "Invalid input".
 * Say what was expected instead, from the issue's own fields.
 */
export function issueText(issue: z.core.$ZodIssue): string {
  const i = issue as z.core.$ZodIssue & { expected?: string; values?: unknown[]; keys?: string[]; minimum?: unknown; maximum?: unknown; format?: string };
  switch (i.code) {
    case "invalid_type":
      // A schema's own message (config.ts durations) says more than the type it expected.
      return i.message && i.message !== "Invalid input" ? i.message : `expected ${i.expected}`;
    case "invalid_value":
      return `expected ${(i.values ?? []).map((v) => JSON.stringify(v)).join(" or ")}`;
    case "unrecognized_keys":
      return `unknown key${(i.keys ?? []).length === 1 ? "" : "s"} ${(i.keys ?? []).map((k) => JSON.stringify(k)).join(", ")}`;
    case "too_small":
      return `must be at least ${String(i.minimum)}`;
    case "too_big":
      return `must be at most ${String(i.maximum)}`;
    case "invalid_format":
      return `expected ${i.format === "datetime" ? "an ISO-8601 UTC time" : `a ${i.format}`}`;
    default:
      return i.message;
  }
}

// One handler for every lazy schema, each proxy's own builder kept by its target: a handler of
// closures apiece was six functions and a context for each of ~35 schemas, ~11 KB of the young
// generation as a bundle loads.
const schemas = new WeakMap<object, { build: () => object; built?: object }>();
const real = (target: object): object => {
  const s = schemas.get(target)!;
  return (s.built ??= s.build());
};
const forwarding: ProxyHandler<object> = {
  get: (t, key) => Reflect.get(real(t), key),
  has: (t, key) => Reflect.has(real(t), key),
  ownKeys: (t) => Reflect.ownKeys(real(t)),
  getOwnPropertyDescriptor: (t, key) => {
    const d = Reflect.getOwnPropertyDescriptor(real(t), key);
    return d ? { ...d, configurable: true } : d;
  },
  getPrototypeOf: (t) => Reflect.getPrototypeOf(real(t)),
};

/**
 * A schema built on first use. Every bundle loads all record modules, but a hook's hot path uses
 * no schema at all (the lease set it reads was validated once, see lease-store.ts); building zod
 * schemas up front costs a cold process ~10 ms, a tenth of Node's own start. The proxy forwards
 * everything to the real schema, so it composes and parses like one.
 */
export function lazySchema<T extends object>(build: () => T): T {
  const target = {};
  schemas.set(target, { build });
  return new Proxy(target, forwarding) as T;
}
