// What the repository policy is read from: which branch integrates everyone's work, its tip, and
// the committed `.handoff.yaml` there (or at an older commit of that branch).
import { join } from "node:path";
import type { ConfigRead } from "./config-read.ts";
import { scanConfig } from "./config-scan.ts";
import type { ObjectReader } from "./object-reader.ts";
import { readIfThere } from "./optional-file.ts";
import type { RefFiles } from "./ref-files.ts";
import { git } from "./run.ts";
import { commitLinks, treeEntries } from "./tree-object.ts";

/**
 * Where the lookup may read git's files itself (config-scan.ts, ref-files.ts): the first command in
 * a repository, and the first after its config changes, started three git processes for it.
 * Whatever those readers cannot answer (an include, configuration from the environment, refs
 * not kept as files) is asked of git as before.
 */
export interface LocalRepo {
  commonDir: string;
  gitDir: string | null;
  /** The repository's refs as files, or null where they are not kept so (RefFiles.usable). */
  refs: RefFiles | null;
  /** git's config files as the caller's opening of the repository reads them; else read for each question. */
  config?: ConfigRead;
}

async function configValue(cwd: string, key: string, local?: LocalRepo): Promise<string | null> {
  const dot = key.indexOf(".");
  const [section, name] = [key.slice(0, dot).toLowerCase(), key.slice(dot + 1).toLowerCase()];
  const entries = local ? scanConfig(process.env, local.commonDir, local.gitDir, (s, sub, k) => s === section && sub === null && k === name, null, local.config) : null;
  // `git config --get` prints the last value; a key written alone prints nothing.
  if (entries) return entries.at(-1)?.value?.trim() || null;
  const r = await git(["config", "--get", key], { cwd });
  const v = r.code === 0 ? r.stdout.trim() : "";
  return v || null;
}

/** The commit a local branch points at, or null. */
export async function branchTip(cwd: string, branch: string, local?: LocalRepo): Promise<string | null> {
  if (local?.refs) return local.refs.read(`refs/heads/${branch}`);
  const r = await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `refs/heads/${branch}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** What `refs/remotes/<remote>/HEAD` names, shortened (`origin/main`), or null; undefined: ask git. */
function remoteHead(local: LocalRepo | undefined, remote: string): string | null | undefined {
  if (!local?.refs) return undefined;
  // A symbolic ref is never packed: its file, or none.
  const text = readIfThere(join(local.commonDir, "refs", "remotes", remote, "HEAD"));
  if (text === null) return null;
  const m = /^ref: refs\/remotes\/(\S+)\n?$/.exec(text);
  return m ? m[1]! : undefined;
}

export interface IntegrationBranch {
  branch: string | null;
  /** How it was found: `git config handoff.integrationBranch`, the sync remote's HEAD, init.defaultBranch, ... */
  from: string;
}

/**
 * The integration branch: `git config handoff.integrationBranch`, else the sync remote's HEAD,
 * else `init.defaultBranch` (git's default `master` when unset) or `main` when such a branch
 * exists, else none.
 */
export async function findIntegrationBranch(cwd: string, remote: string | null, local?: LocalRepo): Promise<IntegrationBranch> {
  const configured = await configValue(cwd, "handoff.integrationBranch", local);
  if (configured) return { branch: configured, from: "git config handoff.integrationBranch" };
  if (remote) {
    let name = remoteHead(local, remote);
    if (name === undefined) {
      const r = await git(["symbolic-ref", "--quiet", "--short", `refs/remotes/${remote}/HEAD`], { cwd });
      name = r.code === 0 ? r.stdout.trim() : "";
    }
    if (name?.startsWith(`${remote}/`)) return { branch: name.slice(remote.length + 1), from: `${remote}/HEAD` };
  }
  const initDefault = await configValue(cwd, "init.defaultBranch", local);
  for (const [branch, from] of [[initDefault, "init.defaultBranch"], ["main", "the main branch"], ["master", "the master branch"]] as const) {
    if (branch && (await branchTip(cwd, branch, local))) return { branch, from };
  }
  return { branch: null, from: "none: set git config handoff.integrationBranch" };
}

/** The text of `path` at `commit`, or null when that commit has no such file. */
export async function fileAt(cwd: string, commit: string, path: string): Promise<string | null> {
  const r = await git(["cat-file", "blob", `${commit}:${path}`], { cwd });
  return r.code === 0 ? r.stdout : null;
}

/** Entry modes whose object `git cat-file blob <commit>:<path>` prints (a file, an executable, a symbolic link). */
const BLOB_MODES = new Set(["100644", "100755", "120000"]);

/**
 * The id of the blob at `path` in `commit`, read in process (loose and packed objects, object-reader.ts's
 * reader): null where `git cat-file blob <commit>:<path>` finds no blob (no such entry, a folder,
 * a submodule), undefined where this cannot tell (an object missing here or not as expected: a tag,
 * a tree not well formed), for git itself to answer. A commit on the integration branch moves the
 * policy's key; its file's blob id says whether the policy itself moved (most commits leave it).
 */
export async function blobIdAt(reader: ObjectReader, commit: string, path: string): Promise<string | null | undefined> {
  const c = await reader.read(commit);
  if (c?.type !== "commit") return undefined;
  const oidBytes = commit.length / 2;
  let id = commitLinks(c.data).tree;
  if (!id || id.length !== commit.length) return undefined;
  const parts = path.split("/");
  for (const [k, name] of parts.entries()) {
    const t = await reader.read(id);
    if (t?.type !== "tree") return undefined;
    const entries = treeEntries(t.data, oidBytes);
    if (!entries) return undefined;
    const e = entries.find((x) => x.name === name);
    if (!e) return null;
    const last = k === parts.length - 1;
    if (last ? !BLOB_MODES.has(e.mode) : e.mode !== "40000") return null;
    id = e.oid;
  }
  return id;
}

/** A blob's text as `fileAt` gives it, read in process; undefined when it is not found here (ask git). */
export async function blobText(reader: ObjectReader, oid: string): Promise<string | undefined> {
  const b = await reader.read(oid);
  return b?.type === "blob" ? b.data.toString("utf8") : undefined;
}

/** Commits of `tip`'s first-parent history that changed `path`, newest first (bounded). */
export async function commitsTouching(cwd: string, tip: string, path: string, limit: number): Promise<string[]> {
  const r = await git(["log", "--first-parent", "--format=%H", `-n${limit}`, tip, "--", path], { cwd });
  return r.code === 0 ? r.stdout.split("\n").filter(Boolean) : [];
}
