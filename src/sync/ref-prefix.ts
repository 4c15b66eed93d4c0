// Branch-only hosts: `git handoff remote <name> --ref-prefix refs/heads/<prefix>/` keeps the
// coordination refs under a branch prefix on that remote (src/git/ref-prefix.ts maps the names).
// The prefix is refused when it would clash with a branch (one named <prefix> itself, which git
// cannot hold beside refs under it, or branches under it that are not coordination refs). What it
// costs: a plain `git fetch` with the default refspec copies those branches into refs/remotes/;
// doctor suggests the negative refspec that avoids it.
import { fail } from "../core/errors.ts";
import { refComponentProblem } from "../core/ids.ts";
import { HANDOFF_ROOT, notePrefix, remotePrefix } from "../git/ref-prefix.ts";
import { git } from "../git/run.ts";
import { familyNamed } from "../store/ref-families.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";
import { remoteTimeoutMs } from "./remote-budget.ts";
import { forgetTracking } from "./tracking-identity.ts";

/** `refs/heads/<a>/<b>/`, each component a valid ref component; the reason it is not, or null. */
export function prefixProblem(prefix: string): string | null {
  if (!prefix.startsWith("refs/heads/")) return "must start with refs/heads/ (branch-only hosts accept nothing else)";
  if (!prefix.endsWith("/")) return "must end with /";
  const parts = prefix.slice("refs/heads/".length, -1).split("/");
  if (!parts[0]) return "needs a name after refs/heads/";
  for (const p of parts) {
    const problem = refComponentProblem(p);
    if (problem) return `component ${JSON.stringify(p.slice(0, 40))} ${problem}`;
  }
  return null;
}

/** Whether a name under the prefix is one of ours: the first component is a ref family. */
function looksLikeOurs(rest: string): boolean {
  const family = rest.split("/")[0]!;
  return familyNamed(family) !== undefined;
}

/**
 * Checks `prefix` for `remote` (local branches and the remote's) and stores it; `null` goes back
 * to refs/handoff/ on the remote.
 */
export async function setRefPrefix(store: Store, remote: string, prefix: string | null): Promise<void> {
  const key = `remote.${remote}.handoffRefPrefix`;
  const was = await remotePrefix(store.cwd, remote);
  if (prefix === null || prefix === HANDOFF_ROOT) {
    await git(["config", "--local", "--unset-all", key], { cwd: store.cwd });
    notePrefix(store.cwd, remote, null);
    // The tracking refs are of the old place: kept, the next sync would take every ref the
    // remote lacks under the new prefix for one deleted there (tracking-identity.ts).
    if (was !== HANDOFF_ROOT) await forgetTracking(store, remote);
    return;
  }
  const problem = prefixProblem(prefix);
  if (problem) fail("invalid_input", `--ref-prefix ${JSON.stringify(prefix.slice(0, 100))} ${problem}`);
  const branch = prefix.slice(0, -1);
  const clash = (names: string[], where: string) => {
    const exact = names.find((n) => n === branch);
    const foreign = names.find((n) => n.startsWith(prefix) && !looksLikeOurs(n.slice(prefix.length)));
    const name = exact ?? foreign;
    if (!name) return;
    fail(
      "invalid_input",
      `--ref-prefix ${prefix} clashes with the branch ${name.slice("refs/heads/".length)} ${where}: ${exact ? "git cannot keep a branch and refs under a folder of the same name" : "it is not a coordination ref, and sync would treat it as one"}`,
      { prefix, branch: name, where },
      [{ action: "fix_input", detail: `choose a prefix no branch uses, such as ${prefix.slice(0, -1)}-coordination/` }],
    );
  };
  const local = await git(["for-each-ref", "--format=%(refname)", branch, prefix], { cwd: store.cwd });
  clash(local.stdout.split("\n").filter(Boolean), "in this clone");
  const remoteHas = await git(["ls-remote", "--end-of-options", remote, branch, `${prefix}*`], { cwd: store.cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs: await remoteTimeoutMs(store) });
  if (remoteHas.code !== 0 || remoteHas.timedOut) {
    fail("remote_unreachable", `cannot check --ref-prefix against ${remote}: ${remoteHas.timedOut ? "git ls-remote timed out" : remoteHas.stderr.trim().split("\n")[0] ?? ""}`, { remote }, [
      { action: "retry", detail: "check the network or credentials, then run the command again" },
    ]);
  }
  clash(remoteHas.stdout.split("\n").map((l) => l.slice(l.indexOf("\t") + 1)).filter(Boolean), `on ${remote}`);
  await git(["config", "--local", key, prefix], { cwd: store.cwd });
  notePrefix(store.cwd, remote, prefix);
  if (was !== prefix) await forgetTracking(store, remote);
}

/** `git handoff remote <name> --ref-prefix P`: the remote must exist; `refs/handoff/` undoes it. */
export async function setRefPrefixChecked(store: Store, remote: string, prefix: string): Promise<void> {
  const problem = refComponentProblem(remote);
  if (problem) fail("invalid_input", `invalid remote name ${JSON.stringify(remote.slice(0, 80))}: it ${problem}`);
  const url = await git(["config", "--get", `remote.${remote}.url`], { cwd: store.cwd });
  if (url.code !== 0) fail("not_found", `no git remote named ${remote}`, { remote }, [{ action: "fix_input", detail: `add it first: git remote add ${remote} <url>` }]);
  await setRefPrefix(store, remote, prefix === HANDOFF_ROOT ? null : prefix);
}

/** doctor: with a branch prefix, a plain `git fetch` should skip those branches (git >= 2.29). */
export async function refPrefixCheck(store: Store, remote: string): Promise<Check | null> {
  const prefix = await remotePrefix(store.cwd, remote);
  if (prefix === HANDOFF_ROOT) return null;
  const negative = `^${prefix}*`;
  const fetch = await git(["config", "--get-all", `remote.${remote}.fetch`], { cwd: store.cwd });
  const specs = fetch.stdout.split("\n").filter(Boolean);
  const copies = specs.some((s) => !s.startsWith("^") && /refs\/heads\/\*/.test(s));
  if (!copies || specs.includes(negative)) {
    return { name: "ref-prefix", status: "ok", detail: `coordination refs live under ${prefix} on ${remote}${copies ? `; plain git fetch skips them (${negative})` : ""}` };
  }
  return {
    name: "ref-prefix",
    status: "warn",
    detail: `coordination refs live under ${prefix} on ${remote}: a plain git fetch copies them into refs/remotes/${remote}/`,
    fix: `git config --add remote.${remote}.fetch '${negative}'   (a negative refspec, git >= 2.29)`,
  };
}
