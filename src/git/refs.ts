import { fail } from "../core/errors.ts";
import { firstLine, git, toolIdentityEnv } from "./run.ts";

export interface RefTip {
  name: string;
  oid: string;
}

/** Every ref under `prefix` (a folder like `refs/handoff/`), with the object it points at. */
export async function listRefs(cwd: string, prefix: string): Promise<RefTip[]> {
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", prefix], { cwd });
  if (r.code !== 0) throw new Error(`git for-each-ref failed: ${firstLine(r.stderr)}`);
  const tips: RefTip[] = [];
  for (const line of r.stdout.split("\n")) {
    if (!line) continue;
    const sp = line.indexOf(" ");
    tips.push({ oid: line.slice(0, sp), name: line.slice(sp + 1) });
  }
  return tips;
}

export async function readRef(cwd: string, name: string): Promise<string | null> {
  const tips = await listRefs(cwd, name);
  return tips.find((t) => t.name === name)?.oid ?? null;
}

/** One ref change inside a transaction. `old: null` means the ref must not exist yet. */
export interface RefUpdate {
  ref: string;
  /** The new value, or null to delete the ref. */
  new: string | null;
  old: string | null;
}

export type TransactionResult = { ok: true } | { ok: false; reason: "stale" | "locked" | "missing_object"; message: string };

/**
 * Applies all updates or none, each only if its ref still has the expected old value: native
 * `git update-ref --stdin`, which honours git's lock files, packed refs, worktrees and the
 * reference-transaction hook. A lost race comes back as a value, not an exception.
 */
export async function updateRefs(cwd: string, updates: RefUpdate[], zeroOid: string, agent?: string): Promise<TransactionResult> {
  const r = await git(["update-ref", "--stdin"], { cwd, input: transactionScript(updates, zeroOid), env: toolIdentityEnv(agent) });
  if (r.code === 0) return { ok: true };
  const message = firstLine(r.stderr);
  const lost = classifyUpdateFailure(r.stderr, message);
  if (lost) return lost;
  throw new Error(`git update-ref failed: ${message}`);
}

/** The `--stdin` script of one all-or-nothing transaction. */
export function transactionScript(updates: RefUpdate[], zeroOid: string): string {
  const lines = ["start"];
  for (const u of updates) {
    const old = u.old ?? zeroOid;
    lines.push(u.new === null ? `delete ${u.ref} ${old}` : `update ${u.ref} ${u.new} ${old}`);
  }
  lines.push("prepare", "commit", "");
  return lines.join("\n");
}

/**
 * Git reports a lost compare-and-swap only as prose on stderr. These are its two forms: someone
 * holds the lock right now, or the ref no longer has the expected value. Anything else is an error.
 */
export function classifyUpdateFailure(stderr: string, message: string): TransactionResult | null {
  // A file where git needs a folder under refs/ (or a folder or ref where it needs a ref): no
  // writer made that, and no retry changes it. It read as a lock held by another writer, so the
  // write was retried until it gave up, saying "try again".
  if (/non-directory in the way|exists; cannot create|blocking reference/i.test(stderr)) {
    fail(
      "corrupt_state",
      `${message}: something under .git/refs/ is in the way of this ref (a file where git needs a folder, or the reverse); nothing a retry changes`,
      {},
      [{ action: "fix_input", detail: "move the file or folder git names out of .git/refs/ (git handoff doctor lists the refs it can read), then run the command again" }],
    );
  }
  // A new value whose object vanished between its write and the update (a concurrent prune).
  if (/with nonexistent object/i.test(stderr)) return { ok: false, reason: "missing_object", message };
  if (/File exists|Unable to create .*\.lock|unable to lock|lock file/i.test(stderr)) return { ok: false, reason: "locked", message };
  if (/cannot lock ref|but expected|already exists|reference is missing|unable to resolve reference/i.test(stderr)) {
    return { ok: false, reason: "stale", message };
  }
  return null;
}
