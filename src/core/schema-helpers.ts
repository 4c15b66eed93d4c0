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
    .map((i) => `${i.path.length ? i.path.join(".") : "(record)"}: ${i.message}`)
    .join("; ");
}
