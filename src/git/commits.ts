import { fail } from "../core/errors.ts";
import { git } from "./run.ts";

/** Resolves a revision a user typed to a full commit id, or fails with invalid_input. */
export async function resolveCommit(cwd: string, rev: string): Promise<string> {
  if (!rev || rev.startsWith("-") || /[\x00-\x1f]/.test(rev) || rev.length > 256) {
    fail("invalid_input", `invalid commit ${JSON.stringify(rev.slice(0, 80))}`);
  }
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], { cwd });
  if (r.code !== 0) fail("invalid_input", `no commit ${JSON.stringify(rev)} in this repository`);
  return r.stdout.trim();
}
