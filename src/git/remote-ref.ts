// Following one ref on a sync remote: `git ls-remote <remote> <ref>` asks for exactly that ref
// (protocol v2 `ref-prefix`), so a waiter's poll costs one small advertisement however many refs
// the remote holds.
import { noteRemoteCall } from "./remote-calls.ts";
import { firstLine, git } from "./run.ts";
import { fromRemote, remotePrefix, toRemote } from "./ref-prefix.ts";

export type RemoteRefValue = { ok: true; oid: string | null } | { ok: false; message: string };

export async function lsRemoteRef(cwd: string, remote: string, ref: string, timeoutMs: number): Promise<RemoteRefValue> {
  const r = await lsRemoteRefs(cwd, remote, [ref], timeoutMs);
  return r.ok ? { ok: true, oid: r.tips.get(ref) ?? null } : r;
}

/** Several exact refs in one advertisement; a ref the remote lacks is absent from `tips`. */
export async function lsRemoteRefs(cwd: string, remote: string, refs: string[], timeoutMs: number): Promise<{ ok: true; tips: Map<string, string> } | { ok: false; message: string; timedOut?: boolean }> {
  noteRemoteCall(cwd, remote, "ls-remote");
  const prefix = await remotePrefix(cwd, remote);
  const r = await git(["ls-remote", "--end-of-options", remote, ...refs.map((x) => toRemote(x, prefix))], { cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs });
  if (r.timedOut) return { ok: false, message: `git ls-remote did not answer within ${timeoutMs} ms`, timedOut: true };
  if (r.code !== 0) return { ok: false, message: firstLine(r.stderr) || `git ls-remote exited ${r.code}` };
  const tips = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const tab = line.indexOf("\t");
    // A pattern also matches longer names ending in it: keep only the refs asked for.
    const ref = tab > 0 ? fromRemote(line.slice(tab + 1), prefix) : null;
    if (ref && refs.includes(ref)) tips.set(ref, line.slice(0, tab));
  }
  return { ok: true, tips };
}

/** Every ref of the remote under `prefix` (e.g. refs/handoff/tasks/) in one advertisement. */
export async function lsRemotePrefix(cwd: string, remote: string, prefix: string, timeoutMs: number): Promise<{ ok: true; tips: Map<string, string> } | { ok: false; message: string; timedOut?: boolean }> {
  noteRemoteCall(cwd, remote, "ls-remote");
  const mapped = await remotePrefix(cwd, remote);
  const r = await git(["ls-remote", "--end-of-options", remote, `${toRemote(prefix, mapped)}*`], { cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs });
  if (r.timedOut) return { ok: false, message: `git ls-remote did not answer within ${timeoutMs} ms`, timedOut: true };
  if (r.code !== 0) return { ok: false, message: firstLine(r.stderr) || `git ls-remote exited ${r.code}` };
  const tips = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const tab = line.indexOf("\t");
    const ref = tab > 0 ? fromRemote(line.slice(tab + 1), mapped) : null;
    if (ref && ref.startsWith(prefix)) tips.set(ref, line.slice(0, tab));
  }
  return { ok: true, tips };
}
