// The effective policy of this worktree: the `.handoff.yaml` committed at the integration branch's
// tip, which a worktree's own file may only make stricter (core/policy-merge.ts). Read from the
// commit, not from any worktree, and cached in .git/handoff/policy.cache keyed by the tip (and by
// the repository config, which names the branch), so a hook pays a file read, not git spawns.
import { readIfThere } from "../git/optional-file.ts";
import { resolveConfig, type Config, type ConfigFile } from "../core/config.ts";
import { HandoffError } from "../core/errors.ts";
import { stricterOnly } from "../core/policy-merge.ts";
import { fileStampAndTime } from "../git/file-stamp.ts";
import { ConfigRead } from "../git/config-read.ts";
import { configFiles } from "../git/config-scan.ts";
import { blobIdAt, blobText, branchTip, commitsTouching, fileAt, findIntegrationBranch } from "../git/policy-source.ts";
import { ObjectReader } from "../git/object-reader.ts";
import { RefFiles } from "../git/ref-files.ts";
import { configuredRemote } from "../git/configured-remote.ts";
import type { RepoInfo } from "../git/repo.ts";
import { CONFIG_NAME, parseConfigData } from "./config-file.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";

/** Where the policy in force comes from, for `status`, `doctor` and the notices. */
export interface PolicySource {
  /** The integration branch, or null when none could be found. */
  branch: string | null;
  /** How the branch was found. */
  from: string;
  /** The commit whose `.handoff.yaml` is in force; null when none is committed there. */
  commit: string | null;
  /** Set when the tip's file does not parse and an older commit's is used. */
  fallback: string | null;
  /** What this worktree's own file asked for and did not get (or why it was ignored), as sentences. */
  setAside: string[];
  /** Keys this build does not know, left out of the policy (a newer git-handoff wrote them, or a typo). */
  warnings: string[];
}

/**
 * policy.cache's version: a file of another is read as none. 2: `stamp` and the lookup's stamps
 * with times in milliseconds and their fraction (file-stamp.ts); 1 wrote none, with nanoseconds.
 * An older build compares its own stamp's form with this one's and finds no match either. Bumped
 * with any change of the policy file's schema too: `data` is taken unchecked
 * (test/cache-formats.test.ts).
 */
export const POLICY_CACHE_VERSION = 2;

interface Cached {
  v?: number;
  stamp: string;
  branch: string | null;
  from: string;
  tip: string | null;
  commit: string | null;
  text: string | null;
  data: ConfigFile | null;
  fallback: string | null;
  warnings?: string[];
  /**
   * The id of the `.handoff.yaml` blob at `tip` (null: none there), when it was read in process:
   * a later tip with the same blob has the same policy, kept without a parse. Absent in caches
   * written before it, or when git had to answer.
   */
  blob?: string | null;
  /**
   * What the branch lookup read besides the repository config, as it was then (lookupStamp); absent
   * where that cannot be told (configuration from the environment) or was changing (racy).
   */
  lookup?: { remote: string | null; stamp: string };
}

const FALLBACK_DEPTH = 200;

/**
 * The committed policy at the integration branch's tip, walking back past commits whose file does
 * not parse. `atTip`: the tip's file as read in process (blobIdAt, blobText), else git reads it.
 */
async function committedPolicy(cwd: string, tip: string, branch: string, atTip: string | null | undefined): Promise<Pick<Cached, "commit" | "text" | "data" | "fallback" | "warnings">> {
  const text = atTip !== undefined ? atTip : await fileAt(cwd, tip, CONFIG_NAME);
  if (text === null) return { commit: null, text: null, data: null, fallback: null };
  let problem: string;
  try {
    const warnings: string[] = [];
    return { commit: tip, text, data: await parseConfigData(text, warnings), fallback: null, warnings };
  } catch (e) {
    if (!(e instanceof HandoffError)) throw e;
    problem = e.message;
  }
  for (const commit of await commitsTouching(cwd, tip, CONFIG_NAME, FALLBACK_DEPTH)) {
    const older = await fileAt(cwd, commit, CONFIG_NAME);
    if (older === null) continue;
    try {
      const data = await parseConfigData(older);
      const fallback = `the ${CONFIG_NAME} at ${branch} (${tip.slice(0, 12)}) does not parse (${problem}); using the one at ${commit.slice(0, 12)}, the last that does: fix it on ${branch}`;
      return { commit, text: older, data, fallback };
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
    }
  }
  // Nothing on the branch parses: refuse, as an unparsable policy always was (never fail open).
  throw new HandoffError({ code: "invalid_input", message: `${problem} (committed on ${branch}, no earlier version parses)` });
}

async function repositoryPart(repo: RepoInfo, read: ConfigRead): Promise<Cached> {
  const cwd = repo.workTree ?? repo.gitDir;
  const cacheFile = `${repo.commonDir}/handoff/policy.cache`;
  // The config as the lookup below reads it (one ConfigRead): the key and what it keys agree.
  const stamp = read.stamp(`${repo.commonDir}/config`).stamp || "none"; // configFileStamp's
  let cached: Cached | null = null;
  try {
    cached = JSON.parse(readSmallFile(cacheFile) ?? "null") as Cached | null;
  } catch {
    cached = null;
  }
  if (cached?.v !== POLICY_CACHE_VERSION || cached.stamp !== stamp) cached = null;
  const local = { commonDir: repo.commonDir, gitDir: repo.gitDir, refs: RefFiles.usable(repo.commonDir, read) ? new RefFiles(repo.commonDir) : null, config: read };
  const tipOf = (b: string) => branchTip(cwd, b, local);
  let branch = cached?.branch ?? null;
  let from = cached?.from ?? "";
  // A cached answer stands while nothing the lookup read changed: the remote's HEAD (git sets it
  // on fetch), the local branches (a `main` made beside the `master` that was found), the other
  // config files (init.defaultBranch). Checked by stat alone; the lookup itself reads git's files
  // in process, or starts git processes where it must (every command paid them in a repository
  // with no branch to find). Where what it read cannot be told (configuration from the
  // environment), a found branch stands while it exists, as it did.
  const lookupNow = cached?.lookup ? lookupStamp(repo, cached.lookup.remote, read) : null;
  const stands = cached?.lookup ? lookupNow === cached.lookup.stamp : !!cached?.branch && lookupStamp(repo, null, read) === null;
  let tip = branch && stands ? await tipOf(branch) : null;
  let remote = cached?.lookup?.remote ?? null;
  if (!cached || !stands || (branch !== null && !tip)) {
    remote = (await configuredRemote(cwd, repo.commonDir, read)).name;
    ({ branch, from } = await findIntegrationBranch(cwd, remote, local));
    tip = branch ? await tipOf(branch) : null;
    if (cached && (cached.branch !== branch || branch === null)) cached = null;
  }
  if (cached && cached.tip === tip) {
    if (stands) return cached;
    // Looked up again, the same branch at the same tip: the policy stands, what the lookup read is
    // noted anew, and how the branch was found (origin/HEAD set to the main branch found before:
    // the same branch, found another way).
    const looked = lookupStamp(repo, remote, read);
    const { lookup: _, ...rest } = cached;
    const next: Cached = { ...rest, from, ...(looked ? { lookup: { remote, stamp: looked } } : {}) };
    if (next.lookup?.stamp !== cached.lookup?.stamp || next.from !== cached.from) writeSmallFile(cacheFile, JSON.stringify(next));
    return next;
  }
  const { part, blob } = tip && branch ? await policyAt(repo, cwd, tip, branch, cached) : { part: { commit: null, text: null, data: null, fallback: null }, blob: undefined };
  const looked = stands && cached?.lookup ? cached.lookup.stamp : lookupStamp(repo, remote, read);
  const fresh: Cached = { v: POLICY_CACHE_VERSION, stamp, branch, from, tip, ...part, ...(blob !== undefined ? { blob } : {}), ...(looked ? { lookup: { remote, stamp: looked } } : {}) };
  writeSmallFile(cacheFile, JSON.stringify(fresh));
  return fresh;
}

/**
 * The committed policy at a new tip of the integration branch. Its `.handoff.yaml` is found in
 * process (the commit and its tree read as objects, no git process), and when it is the blob the
 * cached policy was parsed from, that policy stands: most commits leave the file alone, and a
 * command after each of them spawned `git cat-file` and loaded and ran the YAML parser (a cold
 * `task show` after a commit on main: ~60 ms more than without).
 */
async function policyAt(repo: RepoInfo, cwd: string, tip: string, branch: string, cached: Cached | null): Promise<{ part: Pick<Cached, "commit" | "text" | "data" | "fallback" | "warnings">; blob: string | null | undefined }> {
  const reader = new ObjectReader(repo.commonDir, cwd);
  try {
    const blob = await blobIdAt(reader, tip, CONFIG_NAME);
    // An answer that fell back to an older commit names that commit, not its tip: read again.
    if (blob !== undefined && cached?.blob === blob && cached.commit === (blob === null ? null : cached.tip)) {
      return { part: { commit: blob === null ? null : tip, text: cached.text, data: cached.data, fallback: null, ...(cached.warnings ? { warnings: cached.warnings } : {}) }, blob };
    }
    const atTip = blob === undefined ? undefined : blob === null ? null : await blobText(reader, blob);
    return { part: await committedPolicy(cwd, tip, branch, atTip), blob: atTip === undefined ? undefined : blob };
  } finally {
    reader.close();
  }
}

/**
 * What findIntegrationBranch reads besides the repository's own config file (which `stamp` covers):
 * the local branches (a new one changes refs/heads or packed-refs), the remote's HEAD, and every
 * config file git reads (config-scan.ts's list). null when configuration comes from the
 * environment (what was read cannot be told); "" when a file changed too lately to tell. The
 * config files' stamps are those of the reads the lookup used (`read`), not a stat of their own.
 */
function lookupStamp(repo: RepoInfo, remote: string | null, read: ConfigRead): string | null {
  const config = configFiles(process.env, repo.commonDir, null);
  if (!config) return null;
  const own = `${repo.commonDir}/config`; // `stamp`'s
  const refFiles = [`${repo.commonDir}/refs/heads`, `${repo.commonDir}/packed-refs`, ...(remote ? [`${repo.commonDir}/refs/remotes/${remote}/HEAD`] : [])];
  const files = [...refFiles, ...config.filter((f) => f !== own)];
  // A file changed within the last two seconds may change again within its timestamp's tick
  // unseen (git's "racy" index entries): such an answer is not kept. One stat a file gives both
  // (it was a stat for the time, then another for the stamp: twelve before a pre-edit hook answered).
  const racy = Date.now() - RACY_MS;
  const stamps: string[] = [];
  for (const [i, f] of files.entries()) {
    const { stamp, mtimeMs } = i >= refFiles.length ? read.stamp(f) : fileStampAndTime(f);
    if (mtimeMs > racy) return "";
    stamps.push(`${f}:${stamp}`);
  }
  return stamps.join("|");
}

const RACY_MS = 2_000;

function worktreeText(workTree: string | null): string | null {
  if (!workTree) return null;
  try {
    return readIfThere(`${workTree}/${CONFIG_NAME}`);
  } catch {
    return null;
  }
}

/**
 * The policy in force here and where it comes from. `read`: git's config files as the caller's
 * opening of the repository reads them (config-read.ts ConfigRead); without it, read now.
 */
export async function loadRepositoryConfig(repo: RepoInfo, read: ConfigRead = new ConfigRead()): Promise<{ config: Config; source: PolicySource }> {
  const part = await repositoryPart(repo, read);
  const local = worktreeText(repo.workTree);
  const where = part.commit ? `${part.branch} (${part.commit.slice(0, 12)})` : "";
  const source: PolicySource = { branch: part.branch, from: part.from, commit: part.commit, fallback: part.fallback, setAside: [], warnings: [...(part.warnings ?? [])] };
  let file: ConfigFile;
  if (!part.data) {
    // No policy committed on the integration branch yet: this worktree's file is all there is.
    file = local === null ? {} : await parseConfigData(local, source.warnings);
  } else if (local === null || local === part.text) {
    file = part.data;
  } else {
    try {
      const merged = stricterOnly(part.data, await parseConfigData(local, source.warnings), where);
      file = merged.file;
      source.setAside = merged.setAside.map((x) => `this worktree's ${CONFIG_NAME} asks for ${x}: set aside`);
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      file = part.data;
      source.setAside = [`this worktree's ${CONFIG_NAME} is ignored: ${e.message}`];
    }
  }
  if (file.integration_branch !== undefined || (local !== null && /^integration_branch\s*:/m.test(local))) {
    source.setAside.push(`integration_branch in ${CONFIG_NAME} is not read: set git config handoff.integrationBranch`);
  }
  const config = { ...resolveConfig(file), integrationBranch: part.branch };
  return { config, source };
}
