// A sync remote that is a plain repository on this machine's own disk, pushed to and listed in
// process. `git push` to a path started seven git processes for a claim (push, receive-pack,
// pack-objects, unpack-objects, the connectivity check's rev-list, for-each-ref, gc --auto), three
// of them reading every ref of the remote: at 1,000 live tasks that was most of a one-shot
// claim's time after Node's start. What receive-pack does for a push of a few new objects to refs/handoff/* without
// hooks is what is done here, in its order: the objects the remote lacks are written loose into
// its object folder (as unpack-objects writes them), then the refs are compare-and-swapped under
// git's own lock files (loose-ref-writer.ts, the very files receive-pack locks), every ref or none.
//
// Only the plain case is taken; anything else returns null and goes to `git push` / `git
// ls-remote` as before: a remote named by a URL that is an absolute path (or file:///), no
// pushurl, receivepack, uploadpack or url rewriting for it; a bare repository or a worktree's
// `.git` folder (not a gitfile, not a linked worktree, not shallow) owned by this user, on a local
// file system (mountinfo, read before the remote's folder is touched: a hung network mount must
// not hang this process, which cannot be killed out of a blocking file call); nothing in its
// configuration (any scope) that receive-pack would act on (receive.*, transfer.*, fsck.*, hooks
// path, shared permissions, fsync, extensions other than its object format, which must be ours),
// no receive hook, no reference-transaction hook, no reflog for the refs; few enough loose objects
// and packs that receive-pack would not start `git gc --auto` after the push; no deletion; every
// object to send readable here, a history of single-parent commits. `HANDOFF_PATH_REMOTE=git`
// sends everything to git (benchmarks compare both); `doctor` says which way a remote goes, and why.
// Pushes leave refs loose, as receive-pack does; a listing that reads many packs them in the
// background, as receive-pack's `gc --auto` would have.
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { ConfigRead } from "./config-read.ts";
import { scanConfig, scanRefWritePolicy, type ConfigEntry } from "./config-scan.ts";
import { childProcess } from "./builtins.ts";
import { lockNamedIn, STALE_GIT_LOCK_MS } from "./git-locks.ts";
import { envFor } from "./run.ts";
import { LooseRefWriter } from "./loose-ref-writer.ts";
import { ObjectWriter } from "./object-writer.ts";
import { RefFiles } from "./ref-files.ts";
import { missingObjects, type ObjectSource } from "./push-objects.ts";

type Wanted = (section: string, subsection: string | null, key: string) => boolean;

/** What a push from this clone needs of it: its objects and its configuration. */
export interface PathRemoteSource extends ObjectSource {
  /** This clone's git configuration (all scopes) as config-scan.ts reads it, or null when git must be asked. */
  config(want: Wanted): ConfigEntry[] | null;
  /** Where what was learnt of a remote over HTTP is kept (http-remote.ts), or undefined. */
  stateDir?: string;
  /** Where `git credential` runs for a remote over HTTP (credentials.ts), so the clone's settings apply. */
  gitCwd?: string;
}

/** A remote repository this process can write and read the way receive-pack and upload-pack would. */
interface PathRemote {
  gitDir: string;
  workTree: string | null;
  refs: RefFiles;
}

/**
 * `stuck`: a ref is locked by a lock file older than git ever holds one (a process killed while it
 * held it): retrying cannot help, the lock must be removed.
 */
export type PathPushResult = { ok: true } | { ok: false; message: string; stuck?: string };

/** File systems on a local disk or in memory (statfs names as /proc/self/mountinfo gives them). */
const LOCAL_FS = new Set(["ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "zfs", "f2fs", "reiserfs", "jfs", "bcachefs", "nilfs2"]);

/** Hooks receive-pack runs for a push (any of them, executable or not, sends the push to git). */
const RECEIVE_HOOKS = ["pre-receive", "update", "post-receive", "post-update", "reference-transaction", "proc-receive", "push-to-checkout"];

const disabled = () => process.env.HANDOFF_PATH_REMOTE === "git";

/**
 * Pushes `updates` (remote ref names; `expected` null: the ref must not exist there) to `remote`
 * in process, or returns null when this push is git's (see the head of the file). A refusal says
 * why: every ref is then left as it was, as an atomic push leaves them.
 */
export async function pushToPath(source: PathRemoteSource, remote: string, updates: { ref: string; new: string | null; expected: string | null }[]): Promise<PathPushResult | null> {
  if (disabled() || updates.length === 0 || updates.some((u) => u.new === null)) return null;
  const target = pathRemote(source, remote, true);
  if (!target) return null;
  const objects = await missingObjects(source, updates as { ref: string; new: string; expected: string | null }[]);
  if (!objects) return null;
  const writer = LooseRefWriter.oneShot(target.gitDir, () => scanRefWritePolicy(process.env, target.gitDir, null, target.workTree), target.refs);
  if (!writer) return null;
  // Objects first, as unpack-objects writes them before receive-pack moves a ref; one the remote
  // has already is not written again (ObjectWriter looks for it).
  const out = new ObjectWriter(target.gitDir, source.format);
  const written = new Set<string>();
  for (const [oid, o] of objects) {
    if (out.write(o.type, o.data) !== oid) return null;
    written.add(oid);
  }
  const r = writer.update(
    updates.map((u) => ({ ref: u.ref, new: u.new!, old: u.expected })),
    (oid) => written.has(oid),
  );
  if (r === null) return null;
  if (r.ok) {
    // A prune that ran between the objects' write and the refs' is put right, as a local write does.
    out.settle();
    return { ok: true };
  }
  const lock = r.reason === "locked" ? lockNamedIn(target.gitDir, r.message) : null;
  if (lock && lock.ageMs >= STALE_GIT_LOCK_MS) {
    return { ok: false, message: r.message, stuck: `the lock file ${lock.path} is ${Math.round(lock.ageMs / 1000)} s old, left by a killed process (git holds one for milliseconds): remove it` };
  }
  return { ok: false, message: r.message };
}

/**
 * A whole listing's text and the stamp of the ref files it was read from (the folder, what was
 * listed, every loose ref's value as read, packed-refs' identity from before its text was read:
 * RefFiles.listStamped): a later stamp equal to it means the same text, whatever was written
 * between the two.
 */
export interface StampedListing {
  text: string;
  stamp: string;
}

/**
 * The remote's refs under `prefix` (remote names) as `git ls-remote` prints them (`<oid>\t<name>`
 * lines in name order), or only `names`; null when the listing is git's. A whole listing also
 * gives its stamp, and `known` (an earlier whole listing of the same `prefix` and `also`) is
 * answered without reading the refs when their stamp is still its stamp: at 1,000 tasks a sync
 * with nothing new read and formatted 1,000 refs to find the listing it remembered (quiet-sync.ts).
 */
export function listPath(source: PathRemoteSource, remote: string, prefix: string, names?: string[], also: string[] = [], known?: StampedListing): StampedListing | string | null {
  if (disabled()) return null;
  const target = pathRemote(source, remote, false);
  if (!target) return null;
  if (names) {
    return [...new Set(names)]
      .sort()
      .map((n) => [n, target.refs.read(n)] as const)
      .filter(([, oid]) => oid !== null)
      .map(([n, oid]) => `${oid}\t${n}\n`)
      .join("");
  }
  // `also`: folders (ending in /) listed, or exact names read, outside `prefix`.
  const folders = [prefix, ...also.filter((p) => p.endsWith("/"))];
  const exact = also.filter((p) => !p.endsWith("/"));
  // What was listed is part of the stamp: with nothing loose, a stamp of refs/handoff/ and one of
  // another prefix would both be the folder and packed-refs' identity.
  const stampOf = (refs: string) => `${target.gitDir}\n${folders.join(" ")}\n${exact.join(" ")}\n${refs}`;
  if (known && known.stamp === stampOf(target.refs.stamp(folders, exact))) return known;
  const read = target.refs.listStamped(folders, exact);
  const tips = read.lists.flat();
  exact.forEach((name, i) => {
    const oid = read.values[i];
    if (oid) tips.push({ name, oid });
  });
  if (also.length) tips.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // A name git might judge otherwise (refs.c check_refname_format) is git's to list or skip.
  if (!tips.every((t) => PLAIN_NAME.test(t.name) && !/\.\.|\.lock(\/|$)|\.$/.test(t.name))) return null;
  if (target.refs.looseListed >= PACK_REMOTE_AT) packRefsLater(target.gitDir);
  return { text: tips.map((t) => `${t.oid}\t${t.name}\n`).join(""), stamp: stampOf(read.stamp) };
}

/**
 * Loose refs read by one listing at which the remote's refs get packed. Pushes written here leave
 * every ref loose, as receive-pack does, but receive-pack's `git gc --auto` after a push packs
 * them in time; here nothing would, and each listing would read thousands of files (33 ms of a
 * one-shot sync at 1,000 tasks, where packed-refs is one read). The bound pack-refs.ts uses for a clone.
 */
const PACK_REMOTE_AT = 256;

/** `git pack-refs --all` in the remote, in the background (as receive-pack's `gc --auto` runs it); best effort. */
function packRefsLater(gitDir: string): void {
  try {
    const child = childProcess().spawn("git", ["pack-refs", "--all"], { cwd: gitDir, env: envFor({ cwd: gitDir, env: { GIT_DIR: gitDir } }), detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    /* packing is an optimisation: the next listing tries again */
  }
}

/** A ref name of plain components only (letters, digits, `._@+=-`, none starting with a dot). */
const PLAIN_NAME = /^refs(\/[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]*)+$/;

/** The remote as a repository this process may write (or only read), or null (see the head of the file). */
function pathRemote(source: PathRemoteSource, remote: string, writing: boolean): PathRemote | null {
  const r = inspect(source, remote, writing);
  return "gitDir" in r ? r : null;
}

/**
 * For `doctor`: whether pushes to and listings of `remote` are done in process, and if not, why;
 * null when its URL does not name a folder on this machine (nothing to say).
 */
export function pathRemoteStatus(source: PathRemoteSource, remote: string): { inProcess: true; gitDir: string } | { inProcess: false; why: string } | null {
  if (disabled()) return { inProcess: false, why: "HANDOFF_PATH_REMOTE=git" };
  const r = inspect(source, remote, false);
  if ("gitDir" in r) return { inProcess: true, gitDir: r.gitDir };
  return r.local ? { inProcess: false, why: r.why } : null;
}

/**
 * The remote's git folder, for a fetch through `git upload-pack` run by this process
 * (stream-remote.ts) on the same plain case as a listing; why not; or null when its URL does not
 * name a folder on this machine.
 */
export function pathRemoteDir(source: PathRemoteSource, remote: string): { gitDir: string } | { why: string } | null {
  if (disabled()) return { why: "HANDOFF_PATH_REMOTE=git" };
  const r = inspect(source, remote, false);
  if ("gitDir" in r) return { gitDir: r.gitDir };
  return r.local ? { why: r.why } : null;
}

/** The remote as a repository this process may use, or why not (`local`: its URL names a folder here). */
function inspect(source: PathRemoteSource, remote: string, writing: boolean): PathRemote | { why: string; local: boolean } {
  const mine = source.config((s, sub) => (s === "remote" && sub === remote) || s === "url" || (writing && s === "push"));
  if (!mine) return { why: "this clone's git configuration is more than plain files say (an include, or git -c)", local: false };
  let url: string | null = null;
  const beside: string[] = [];
  for (const e of mine) {
    if (e.section === "url") beside.push(`url.${e.subsection}.${e.key} (git rewrites URLs)`);
    else if (e.section === "push") {
      if (e.key === "pushoption") beside.push("push.pushOption (git asks the remote whether it takes them)");
    } else if (e.key === "url") {
      if (url !== null || e.value === null) beside.push(`more than one remote.${remote}.url`);
      url = e.value;
    } else if (["pushurl", "receivepack", "uploadpack", "vcs"].includes(e.key)) beside.push(`remote.${remote}.${e.key}`);
  }
  const path = url === null ? null : localPath(url);
  if (path === null) return { why: "its URL is not a folder on this machine", local: false };
  const no = (why: string) => ({ why, local: true });
  if (beside.length) return no(beside[0]!);
  // Read once: the path as written and the path it resolves to are both looked up in it.
  const mounts = mountInfo();
  if (mounts === null || !LOCAL_FS.has(mountTypeOf(mounts, path))) return no(`${path} is not on a local file system`);
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return no(`${path} is not there`);
  }
  if (!LOCAL_FS.has(mountTypeOf(mounts, real))) return no(`${real} is not on a local file system`);
  const uid = process.getuid?.();
  if (uid === undefined) return no("this platform has no user ids");
  const dirOwned = (p: string) => {
    try {
      const st = lstatSync(p);
      return st.isDirectory() && st.uid === uid;
    } catch {
      return false;
    }
  };
  let gitDir: string;
  let workTree: string | null = null;
  if (dirOwned(join(real, ".git"))) {
    if (!dirOwned(real)) return no(`${real} is not this user's`);
    gitDir = join(real, ".git");
    workTree = real;
  } else if (existsSync(join(real, ".git"))) return no(`${real}/.git is a gitfile or not this user's`);
  else gitDir = real;
  if (!dirOwned(gitDir) || !existsSync(join(gitDir, "HEAD")) || !dirOwned(join(gitDir, "objects")) || !dirOwned(join(gitDir, "refs"))) return no(`${gitDir} is not a repository of this user's`);
  if (existsSync(join(gitDir, "commondir"))) return no(`${gitDir} is a linked worktree's`);
  if (existsSync(join(gitDir, "shallow"))) return no(`${gitDir} is shallow`);
  // Its config read once for both questions (config-read.ts ConfigRead).
  const read = new ConfigRead();
  if (!RefFiles.usable(gitDir, read)) return no(`${gitDir} keeps its refs in another backend`);
  const theirs = scanConfig(process.env, gitDir, null, () => true, null, read);
  if (!theirs) return no(`${gitDir}'s configuration is more than plain files say (an include)`);
  const setting = receiverSetting(theirs, source.format);
  if (setting) return no(`${gitDir} sets ${setting}`);
  const hook = RECEIVE_HOOKS.find((h) => existsSync(join(gitDir, "hooks", h)));
  if (hook) return no(`${gitDir} has a ${hook} hook`);
  if (writing && wouldCollectGarbage(gitDir, theirs)) return no(`${gitDir} is due a git gc --auto`);
  return { gitDir, workTree, refs: new RefFiles(gitDir) };
}

/** The folder a remote URL names on this machine, or null for any other kind of URL. */
function localPath(url: string): string | null {
  let p = url;
  if (p.startsWith("file://")) {
    p = p.slice(7);
    if (p.includes("%")) return null;
  }
  if (!p.startsWith("/") || /[\0\n\r]/.test(p)) return null;
  return p.replace(/\/+$/, "") || "/";
}

/** This process's mount table (null where there is none to read: then no remote counts as local). */
function mountInfo(): string | null {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return null;
  }
}

/** The file system type of the mount `path` is under, from /proc/self/mountinfo's text ("" for none). */
export function mountTypeOf(mountinfo: string, path: string): string {
  let best = -1;
  let type = "";
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 6 || fields.length < dash + 2) continue;
    const point = fields[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    const under = point === "/" || path === point || path.startsWith(point + "/");
    // A later line for the same point is a mount over it: it wins.
    if (under && point.length >= best) {
      best = point.length;
      type = fields[dash + 1]!;
    }
  }
  return type;
}

/** A setting in the remote's configuration that receive-pack or upload-pack would act on, or null. */
function receiverSetting(entries: ConfigEntry[], format: "sha1" | "sha256"): string | null {
  let theirFormat = "sha1";
  for (const e of entries) {
    const v = (e.value ?? "true").toLowerCase();
    const name = `${e.section}.${e.subsection === null ? "" : `${e.subsection}.`}${e.key}`;
    if (["receive", "transfer", "fsck", "uploadpack", "receivefsck"].includes(e.section)) return name;
    if (e.section === "core" && e.subsection === null) {
      if (["hookspath", "sharedrepository", "fsync", "fsyncobjectfiles", "fsyncmethod", "alternaterefscommand", "alternaterefsprefixes"].includes(e.key)) return name;
      if (e.key === "logallrefupdates" && v === "always") return `${name}=always`;
      if (e.key === "repositoryformatversion" && !/^[01]$/.test(v)) return `${name}=${v}`;
    }
    if (e.section === "extensions") {
      if (e.key !== "objectformat") return name;
      theirFormat = v;
    }
  }
  return theirFormat === format ? null : `extensions.objectformat=${theirFormat} (this clone's is ${format})`;
}

/**
 * Whether receive-pack would start `git gc --auto` after this push (gc.c need_to_gc: more loose
 * objects than gc.auto, estimated from folder 17, or more packs than gc.autoPackLimit): then the
 * push is git's, so the remote is packed as it would be.
 */
export function wouldCollectGarbage(gitDir: string, config: ConfigEntry[]): boolean {
  let auto = 6700;
  let packLimit = 50;
  for (const e of config) {
    if (e.section !== "gc" || e.subsection !== null || e.value === null) continue;
    if (e.key === "auto" && /^-?\d+$/.test(e.value)) auto = Number(e.value);
    if (e.key === "autopacklimit" && /^-?\d+$/.test(e.value)) packLimit = Number(e.value);
  }
  if (auto <= 0) return false;
  const threshold = Math.ceil(auto / 256);
  const loose = names(join(gitDir, "objects", "17")).filter((n) => /^[0-9a-f]{38}([0-9a-f]{24})?$/.test(n)).length;
  if (loose > threshold) return true;
  return packLimit > 0 && names(join(gitDir, "objects", "pack")).filter((n) => n.endsWith(".idx")).length > packLimit;
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
