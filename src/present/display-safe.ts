// Record text in a web page: the page puts every string in with textContent (never as markup),
// and here control characters (terminal escapes) become visible `\xNN` text, as in the terminal.
import { neutralise } from "./untrusted.ts";

/** A deep copy of `value` with every string neutralised. Keys are ours; values may be anyone's. */
export function displaySafe<T>(value: T): T {
  if (typeof value === "string") return neutralise(value) as T;
  if (Array.isArray(value)) return value.map((v) => displaySafe(v)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = displaySafe(v);
    return out as T;
  }
  return value;
}
