// Which remote carries the coordination state: git config `handoff.remote` (local to the repo).
import { fail } from "../core/errors.ts";
import { refComponentProblem } from "../core/ids.ts";
import { configuredRemote } from "../git/remote.ts";
import { git } from "../git/run.ts";
import { remotePrefix } from "../git/ref-prefix.ts";
import type { Store } from "../store/store.ts";

export interface RemoteSetting {
  remote: string | null;
  /** Set with `git handoff remote`, rather than the `origin` default. */
  explicit: boolean;
  url: string | null;
  tracking: string | null;
  /** Where refs/handoff/* live on the remote: refs/handoff/, or a branch prefix (ref-prefix.ts). */
  remote_prefix: string | null;
}

export async function showRemote(store: Store): Promise<RemoteSetting> {
  const r = await configuredRemote(store.cwd);
  return { remote: r.name, explicit: r.explicit, url: r.url, tracking: r.name ? `refs/handoff-remotes/${r.name}/` : null, remote_prefix: r.name ? await remotePrefix(store.cwd, r.name) : null };
}

/** Sets the sync remote to an existing git remote; `null` turns sync off, `undefined` restores the default. */
export async function setRemote(store: Store, name: string | null | undefined): Promise<RemoteSetting> {
  if (name === undefined) {
    await git(["config", "--local", "--unset-all", "handoff.remote"], { cwd: store.cwd });
  } else if (name === null) {
    await git(["config", "--local", "handoff.remote", ""], { cwd: store.cwd });
  } else {
    // The name becomes part of refs/handoff-remotes/<name>/: it must be one ref component.
    const problem = refComponentProblem(name);
    if (problem) fail("invalid_input", `invalid remote name ${JSON.stringify(name.slice(0, 80))}: it ${problem}`);
    const url = await git(["config", "--get", `remote.${name}.url`], { cwd: store.cwd });
    if (url.code !== 0) {
      fail("not_found", `no git remote named ${name}`, { remote: name }, [{ action: "fix_input", detail: `add it first: git remote add ${name} <url>` }]);
    }
    await git(["config", "--local", "handoff.remote", name], { cwd: store.cwd });
  }
  return showRemote(store);
}
