// Files that travel with a task: context and input files from its creator, result files and the
// output from whoever did it. Names are flat (no folders, no dotfiles) and sizes bounded, both
// when they are sent and when they arrive: they come from another machine.
import * as z from "zod/mini";
import { refComponentProblem } from "./ids.ts";
import { objectId } from "./object-id.ts";
import { boundedText, count, isoTime, lazySchema } from "./schema-helpers.ts";

export const MAX_CONTEXT_FILE_BYTES = 1024 * 1024;
export const MAX_TASK_FILES = 100;
/** Input files of one task together, and result files of one task together. */
export const MAX_FILES_BYTES = 25 * 1024 * 1024;
/** The output kept from a command's stdout: its tail, with a marker where it was cut. */
export const MAX_OUTPUT_BYTES = 256 * 1024;
const MAX_NAME_BYTES = 255;

/** Why `name` cannot be a file name that travels with a task, or null. */
export function flatNameProblem(name: string): string | null {
  if (!name) return "is empty";
  if (name.includes("/") || name.includes("\\")) return "is a path (only flat names travel)";
  if (name.startsWith(".")) return "is a dotfile";
  if (/[\x00-\x1f\x7f]/.test(name)) return "contains control characters";
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) return `is longer than ${MAX_NAME_BYTES} bytes`;
  return null;
}

export const FileEntry = lazySchema(() => z.object({ name: z.string(), size: count() }));
export type FileEntry = z.infer<typeof FileEntry>;

/** refs/handoff/inputs/<id>: what the creator sent along. */
export const TaskInputs = lazySchema(() =>
  z.object({
    task: z.string(),
    context: z.array(FileEntry),
    files: z.array(FileEntry),
  }),
);
export type TaskInputs = z.infer<typeof TaskInputs>;

export const RefusedFile = lazySchema(() => z.object({ name: boundedText(1000), reason: boundedText(1000) }));
export type RefusedFile = z.infer<typeof RefusedFile>;

/** refs/handoff/results/<id>: what the worker sent back. */
export const TaskResultFiles = lazySchema(() =>
  z.object({
    task: z.string(),
    status: z.enum(["done", "failed"]),
    output: boundedText(MAX_OUTPUT_BYTES + 200),
    /** Bytes of stdout cut from the front to keep the tail. */
    output_cut: count(),
    reason: z.nullable(boundedText(8000)),
    exit_code: z.nullable(z.int()),
    files: z.array(FileEntry),
    refused: z.array(RefusedFile),
    worker: z.string(),
    machine: z.nullable(z.string()),
    /**
     * With worker --push-branch: the branch the code changes were pushed to, and its commit. Shown
     * to the waiter and put in a suggested `git fetch` line: only a branch name the worker makes
     * (handoff/<task id>) and a full object id are taken from another machine.
     */
    branch: z.optional(z.nullable(z.string().check(z.refine((b) => b.startsWith("handoff/") && refComponentProblem(b.slice(8)) === null, "expected handoff/<task id>")))),
    commit: z.optional(z.nullable(objectId())),
    at: isoTime(),
  }),
);
export type TaskResultFiles = z.infer<typeof TaskResultFiles>;

/**
 * The tail of `out`, at most MAX_OUTPUT_BYTES, with a marker line when the front was cut.
 * `dropped`: bytes printed before `out` and already let go (a command's stdout is kept as a
 * bounded tail while it runs), counted in the cut.
 */
export function outputTail(out: Buffer, dropped = 0): { output: string; cut: number } {
  if (out.length <= MAX_OUTPUT_BYTES && dropped === 0) return { output: out.toString("utf8"), cut: 0 };
  const cut = dropped + Math.max(0, out.length - MAX_OUTPUT_BYTES);
  if (out.length <= MAX_OUTPUT_BYTES) return { output: `[... ${cut} bytes of output cut ...]\n` + out.toString("utf8"), cut };
  return { output: `[... ${cut} bytes of output cut ...]\n` + out.subarray(out.length - MAX_OUTPUT_BYTES).toString("utf8"), cut };
}

/** `FAILED: reason` as the first line of the output marks the task failed with that reason. */
export function reportedFailure(output: string): string | null {
  const first = output.replace(/^\[\.\.\. \d+ bytes of output cut \.\.\.\]\n/, "").split("\n", 1)[0] ?? "";
  const m = /^FAILED:\s*(.*)$/.exec(first.trimEnd());
  if (!m) return null;
  return m[1]!.trim() || "the agent reported failure";
}
