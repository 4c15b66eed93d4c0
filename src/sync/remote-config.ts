// Which remote carries the coordination state: git config `handoff.remote` (local to the repo).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fail } from "../core/errors.ts";
import { refComponentProblem } from "../core/ids.ts";
import { configuredRemote } from "../git/configured-remote.ts";
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

/** The name `git handoff remote --url URL` gives the coordination remote when none is given. */
export const COORDINATION_REMOTE = "coord";

/** Why a URL cannot be stored as a git remote's URL, or null. */
function remoteUrlProblem(url: string): string | null {
  if (url.trim() === "") return "is empty";
  if (url.length > 2048) return `is ${url.length} characters long (at most 2048)`;
  if (url.startsWith("-")) return "starts with '-' (git would read it as an option)";
  if (/[\x00-\x1f\x7f]/.test(url)) return "contains a control character";
  return null;
}

/** The folder a URL names on this machine (a path or file://), resolved against `cwd`; null for other URLs. */
function localPathOf(url: string, cwd: string): string | null {
  if (url.startsWith("file://")) return decodeURIComponent(url.slice("file://".length));
  // scp-like `host:path` and scheme URLs are remote; a path is absolute or starts with ./ or ../.
  return /^(\/|\.\.?\/)/.test(url) ? resolve(cwd, url) : null;
}

/**
 * Makes `name` a dedicated coordination remote at `url` and the sync remote: a repository that
 * carries only refs/handoff/*, so the code repository's ref advertisement (sent with every push
 * and fetch by anyone) carries none of them. The remote gets a URL, no fetch refspec (sync uses
 * explicit refspecs) and skipFetchAll, so the user's `git fetch --all` and `git remote update`
 * leave it alone (without it they would fail on its missing HEAD). An existing remote of that name
 * is reused only when it has that very URL.
 */
export async function setCoordinationRemote(store: Store, name: string, url: string): Promise<RemoteSetting & { created: boolean }> {
  const problem = refComponentProblem(name);
  if (problem) fail("invalid_input", `invalid remote name ${JSON.stringify(name.slice(0, 80))}: it ${problem}`);
  const urlProblem = remoteUrlProblem(url);
  if (urlProblem) fail("invalid_input", `invalid --url ${JSON.stringify(url.slice(0, 80))}: it ${urlProblem}`);
  const existing = await git(["config", "--get", `remote.${name}.url`], { cwd: store.cwd });
  const had = existing.code === 0 ? existing.stdout.trim() : null;
  if (had !== null && had !== url) {
    fail("exists", `git remote ${name} already exists with another URL (${had.slice(0, 200)})`, { remote: name, url: had }, [
      { action: "fix_input", detail: `give another name: git handoff remote <name> --url ${url}` },
      { action: "fix_input", detail: `or change that remote first: git remote set-url ${name} <url>` },
    ]);
  }
  // A path on this machine is checked now: a typo would otherwise surface at the next exclusive write.
  const local = localPathOf(url, store.cwd);
  if (local !== null && !existsSync(local)) {
    fail("not_found", `no repository at ${local} (--url ${JSON.stringify(url.slice(0, 80))})`, { url, path: local }, [
      { action: "fix_input", detail: `create it first: git init --bare ${local}` },
    ]);
  }
  if (had === null) {
    for (const [key, value] of [[`remote.${name}.url`, url], [`remote.${name}.tagOpt`, "--no-tags"], [`remote.${name}.skipFetchAll`, "true"]] as const) {
      const r = await git(["config", "--local", key, value], { cwd: store.cwd });
      if (r.code !== 0) fail("environment", `could not write git config ${key}: ${r.stderr.trim().slice(0, 200)}`);
    }
  }
  return { ...(await setRemote(store, name)), created: had === null };
}

/** Puts back what setCoordinationRemote changed: the remote it added, and the previous sync remote. */
export async function undoCoordinationRemote(store: Store, name: string, created: boolean, before: RemoteSetting): Promise<void> {
  if (created) await git(["config", "--local", "--remove-section", `remote.${name}`], { cwd: store.cwd });
  await setRemote(store, before.explicit ? before.remote : undefined);
}
