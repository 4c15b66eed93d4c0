// Where refs/handoff/* live on a sync remote. By default under the same name; for a host that
// accepts pushes only to branches, under a branch prefix (`remote.<name>.handoffRefPrefix`, set by
// `git handoff remote <name> --ref-prefix refs/heads/<prefix>/`): refs/handoff/tasks/x is
// refs/heads/<prefix>/tasks/x there. Local refs and tracking refs keep their names; only the
// names sent to and read from the remote are mapped, with explicit refspecs both ways.
import { git, placeOf } from "./run.ts";

export const HANDOFF_ROOT = "refs/handoff/";

const known = new Map<string, Promise<string>>();

/** A separate store's folder counts as its clone's worktree (run.ts placeOf): one remote config. */
function key(cwd: string, remote: string): string {
  return `${placeOf(cwd)}\0${remote}`;
}

/** The prefix refs/handoff/* has on `remote` (read once per process and clone). */
export function remotePrefix(cwd: string, remote: string): Promise<string> {
  let p = known.get(key(cwd, remote));
  if (!p) {
    p = git(["config", "--get", `remote.${remote}.handoffRefPrefix`], { cwd }).then((r) => (r.code === 0 && r.stdout.trim() ? r.stdout.trim() : HANDOFF_ROOT));
    known.set(key(cwd, remote), p);
  }
  return p;
}

/** What configuredRemote or `git handoff remote` already read or wrote: no second read. */
export function notePrefix(cwd: string, remote: string, prefix: string | null): void {
  known.set(key(cwd, remote), Promise.resolve(prefix || HANDOFF_ROOT));
}

/**
 * Where another clone of the same remote may keep the refs by mistake: the default when this clone
 * uses a branch prefix, else the documented branch prefix. Two clones that disagree each see only
 * their own namespace, so both could be granted the same task: a full listing also asks for the
 * other namespace's lease ref and task refs (nothing else), which are never read as ours.
 */
export function otherNamespace(prefix: string): string {
  return prefix === HANDOFF_ROOT ? "refs/heads/handoff/" : HANDOFF_ROOT;
}

/** What a listing asks of the other namespace (remote names; `*` as git ls-remote takes it). */
export function splitPatterns(prefix: string): string[] {
  const other = otherNamespace(prefix);
  return [`${other}leases`, `${other}tasks/*`];
}

export interface NamespaceSplit {
  /** Where this clone keeps the refs on the remote, and where others were found. */
  prefix: string;
  namespace: string;
  tasks: number;
  leases: boolean;
}

/** The other namespace's refs among a listing's `<oid>\t<name>` lines, or null when there are none. */
export function splitIn(raw: string, prefix: string): NamespaceSplit | null {
  const namespace = otherNamespace(prefix);
  if (!raw.includes(`\t${namespace}`)) return null;
  const names = raw.split("\n").map((l) => l.slice(l.indexOf("\t") + 1));
  const tasks = names.filter((n) => n.startsWith(`${namespace}tasks/`)).length;
  const leases = names.includes(`${namespace}leases`);
  return tasks || leases ? { prefix, namespace, tasks, leases } : null;
}

/** refs/handoff/<rest> as the remote names it. */
export function toRemote(ref: string, prefix: string): string {
  return prefix === HANDOFF_ROOT || !ref.startsWith(HANDOFF_ROOT) ? ref : prefix + ref.slice(HANDOFF_ROOT.length);
}

/** A remote ref name as refs/handoff/<rest>, or null when it lies outside the prefix. */
export function fromRemote(name: string, prefix: string): string | null {
  return name.startsWith(prefix) ? HANDOFF_ROOT + name.slice(prefix.length) : null;
}
