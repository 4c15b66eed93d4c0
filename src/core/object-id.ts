// Record fields that name commits hold full object ids only: a value from another clone reaches
// git as an argument, and a full hex id can never be read as an option or a revision expression.
import * as z from "zod/mini";

const OBJECT_ID_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A full SHA-1 (40) or SHA-256 (64) object id in lower-case hex. */
export function isObjectId(value: unknown): value is string {
  return typeof value === "string" && OBJECT_ID_RE.test(value);
}

/** The schema of a commit-naming field. */
export const objectId = () => z.string().check(z.regex(OBJECT_ID_RE, "expected a full hex object id"));
