// Following one ref on a sync remote: `git ls-remote <remote> <ref>` asks for exactly that ref
// (protocol v2 `ref-prefix`), so a waiter's poll costs one small advertisement however many refs
// the remote holds.
import { firstLine, git } from "./run.ts";

export type RemoteRefValue = { ok: true; oid: string | null } | { ok: false; message: string };

export async function lsRemoteRef(cwd: string, remote: string, ref: string): Promise<RemoteRefValue> {
  const r = await git(["ls-remote", "--end-of-options", remote, ref], { cwd, env: { GIT_TERMINAL_PROMPT: "0" } });
  if (r.code !== 0) return { ok: false, message: firstLine(r.stderr) || `git ls-remote exited ${r.code}` };
  for (const line of r.stdout.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab > 0 && line.slice(tab + 1) === ref) return { ok: true, oid: line.slice(0, tab) };
  }
  return { ok: true, oid: null };
}
