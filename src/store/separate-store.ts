// Where the coordination refs live: among the user's refs (the shared layout, the default), or in
// a separate store, a bare git dir at <common dir>/handoff-store.git that borrows the repository's
// objects through alternates and keeps its own. In git 2.39 every local ref costs the user's own
// commands: `git fetch` checks connectivity with `rev-list --not --all` and follows tags over every
// ref, `git push` lists every ref to match refspecs, so 10,000 refs/handoff/* refs make a plain
// fetch 2-3x slower even with a dedicated coordination remote. In a separate store they are not
// the user's refs at all.
//
// Moving is a copy, then a switch, then a sweep: the objects the refs reach are packed into the
// new place (never borrowed: the old place's gc would prune them once its refs are gone), the refs
// written there, and one rename makes the new layout the one every process opening the repository
// from then on uses (repo.ts hasSeparateStore looks for the store's HEAD). A process that opened
// it before refuses its next write (Store.refuseIfMoved); a write it made just before the switch is
// carried over by the sweep, which repeats until the old place has nothing new, then empties it.
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fail, HandoffError } from "../core/errors.ts";
import { acquireOwnedLock } from "../git/owned-lock.ts";
import { ownFolder } from "../git/safe-file.ts";
import { SEPARATE_STORE, storeDirOf, type RepoInfo } from "../git/repo.ts";
import { updateRefs, type RefTip, type RefUpdate } from "../git/refs.ts";
import { firstLine, git } from "../git/run.ts";

const FAMILIES = ["refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/"];
/**
 * With a separate store, the repository holds one ref named after each family itself: git cannot
 * then create any ref under it (a ref cannot be both a file and a folder), so a git-handoff from
 * before separate stores, which would read an empty set here and write where nobody reads, fails
 * loudly on its first write instead. Each points at a blob that says where the refs went.
 */
const GUARDS = ["refs/handoff", "refs/handoff-remotes", "refs/handoff-local"];
/** Sweeps before giving up on a writer that keeps writing to the old place. */
const MAX_SWEEPS = 20;
/** How long a move waits for another one in the same clone. */
const LOCK_WAIT_MS = 30_000;

export type Layout = "shared" | "separate";

export interface LayoutReport {
  layout: Layout;
  /** The git dir holding the coordination refs and their objects. */
  git_dir: string;
  refs: number;
}

export interface MoveReport extends LayoutReport {
  from: Layout;
  /** Nothing to do: the refs were already there. */
  already: boolean;
  /** Refs written to the new place, counting those carried over by later sweeps. */
  moved: number;
  /** Sweeps after the switch that found writes made to the old place meanwhile. */
  late_writes: number;
  /** Refs the old place and the new one both changed after the switch: the new place's kept. */
  conflicts: string[];
  dry_run: boolean;
}

const cwdOf = (repo: RepoInfo) => repo.workTree ?? repo.gitDir;
const storePath = (repo: RepoInfo) => `${repo.commonDir}/${SEPARATE_STORE}`;

/** Where the coordination refs of this repository are, and how many. */
export async function describeLayout(repo: RepoInfo): Promise<LayoutReport> {
  const separate = repo.storeDir !== repo.commonDir;
  return { layout: separate ? "separate" : "shared", git_dir: repo.storeDir, refs: (await listFamilies(separate ? repo.storeDir : cwdOf(repo))).length };
}

/** Moves the coordination refs into a separate store, or back among the user's refs; one move at a time per clone. */
export async function moveLayout(repo: RepoInfo, to: Layout, opts: { dryRun?: boolean; agent?: string } = {}): Promise<MoveReport> {
  if (opts.dryRun) return move(repo, to, opts);
  ownFolder(`${repo.commonDir}/handoff`);
  const lock = `${repo.commonDir}/handoff/store-move.lock`;
  const got = await acquireOwnedLock(lock, Date.now() + LOCK_WAIT_MS);
  if (!got.ok) fail("conflict", `another move of the coordination refs is under way (${got.owner ? `process ${got.owner.pid} on ${got.owner.host}` : lock}): run the command again once it ends`);
  try {
    // What the discovery saw may be out of date by the time the lock is ours.
    return await move({ ...repo, storeDir: storeDirOf(repo.commonDir) }, to, opts);
  } finally {
    got.release();
  }
}

async function move(repo: RepoInfo, to: Layout, opts: { dryRun?: boolean; agent?: string }): Promise<MoveReport> {
  const from: Layout = repo.storeDir !== repo.commonDir ? "separate" : "shared";
  const target = to === "separate" ? storePath(repo) : repo.commonDir;
  const source = from === "separate" ? repo.storeDir : cwdOf(repo);
  const tips = await listFamilies(source);
  const base = { layout: to, git_dir: target, from, late_writes: 0, conflicts: [] as string[], dry_run: !!opts.dryRun };
  if (from === to && to === "separate" && !opts.dryRun) return { ...base, ...(await tidy(repo, opts.agent)), refs: tips.length, already: true };
  if (from === to && !opts.dryRun) {
    // Shared, with guards but no store (its folder removed by hand): the guards go, as the user asked.
    if ((await guardsIn(cwdOf(repo))).size) await removeGuards(cwdOf(repo), zeroOf(repo));
    return { ...base, ...(await tidyOldStores(repo, opts.agent)), refs: (await listFamilies(cwdOf(repo))).length, already: true };
  }
  if (from === to) return { ...base, refs: tips.length, already: true, moved: 0 };
  if (repo.isBare && to === "separate") fail("invalid_input", "a bare repository has no work of its own to slow down: its coordination refs stay where they are");
  if (opts.dryRun) return { ...base, refs: tips.length, already: false, moved: tips.length };
  const zero = zeroOf(repo);
  const copied = new Map<string, string>();
  let oldPlace: string;
  let newCwd: string;
  if (to === "separate") {
    // Built beside its final name, then renamed: a store is whole or absent (a crash leaves only `.new`).
    const build = `${target}.new`;
    rmSync(build, { recursive: true, force: true });
    // No store there (the layout is shared): whatever has the name is junk, a file or folders a
    // writer caught by an earlier move left.
    rmSync(target, { recursive: true, force: true });
    makeStore(repo, build);
    await copyObjects(source, `${build}/objects`, tips);
    writePacked(build, tips);
    for (const t of tips) copied.set(t.name, t.oid);
    writeFileSync(`${build}/HEAD`, "ref: refs/heads/none\n");
    renameSync(build, target);
    oldPlace = source;
    newCwd = target;
  } else {
    // Back among the user's refs: written there first (a ref already there is a leftover of a
    // crashed move and is overwritten), then the store renamed out of the way, which is the switch.
    await removeGuards(cwdOf(repo), zero, opts.agent);
    const present = new Map((await listFamilies(cwdOf(repo))).map((t) => [t.name, t.oid]));
    await copyObjects(source, `${repo.commonDir}/objects`, tips);
    const names = new Set(tips.map((t) => t.name));
    const updates: RefUpdate[] = tips.map((t) => ({ ref: t.name, new: t.oid, old: present.get(t.name) ?? null }));
    for (const [name, oid] of present) if (!names.has(name)) updates.push({ ref: name, new: null, old: oid });
    await mustUpdate(cwdOf(repo), updates, zero, opts.agent);
    for (const t of tips) copied.set(t.name, t.oid);
    oldPlace = `${repo.storeDir}.old-${process.pid}`; // still a store to run.ts (its name)
    renameSync(repo.storeDir, oldPlace);
    newCwd = cwdOf(repo);
  }
  const guard = to === "separate" ? async () => placeGuards(cwdOf(repo), target, zero, opts.agent) : async () => true;
  const sweep = await sweepOldPlace(oldPlace, newCwd, `${target}/objects`, copied, zero, guard, opts.agent);
  if (to === "shared") rmSync(oldPlace, { recursive: true, force: true });
  return { ...base, refs: (await listFamilies(newCwd)).length, already: false, moved: copied.size, late_writes: sweep.late, conflicts: sweep.conflicts };
}

/**
 * After the switch: refs the old place gained or moved since they were copied (a process that
 * opened the repository before the switch, mid-write) are carried over, compare-and-swap against
 * what was copied; then the old place's refs are removed, compare-and-swap too, so a write landing
 * meanwhile sends the sweep round again.
 */
export async function sweepOldPlace(oldPlace: string, newCwd: string, newObjects: string, copied: Map<string, string>, zero: string, guard: () => Promise<boolean>, agent?: string): Promise<{ late: number; conflicts: string[] }> {
  const conflicts: string[] = [];
  let late = 0;
  // What the old place held as last carried over, and what the new place was given (the values its
  // compare-and-swaps expect). A ref the new place changed on its own meanwhile fails its swap:
  // the new place's value stands, and the ref is reported.
  let seen = new Map(copied);
  const placed = copied;
  for (let n = 0; n < MAX_SWEEPS; n++) {
    const now = await listFamilies(oldPlace);
    const present = new Set(now.map((t) => t.name));
    const changed = now.filter((t) => seen.get(t.name) !== t.oid);
    // Removed there since they were carried (a compaction, a forced cancel): removed here too.
    const gone = [...seen.keys()].filter((name) => !present.has(name));
    if (changed.length || gone.length) late++;
    if (changed.length) await copyObjects(oldPlace, newObjects, changed);
    const carry = [...changed.map((t) => ({ ref: t.name, new: t.oid as string | null })), ...gone.map((ref) => ({ ref, new: null }))];
    for (const c of carry) {
      const r = await updateRefs(newCwd, [{ ...c, old: placed.get(c.ref) ?? null }], zero, agent);
      if (!r.ok) {
        if (!conflicts.includes(c.ref)) conflicts.push(c.ref);
      } else if (c.new) placed.set(c.ref, c.new);
      else placed.delete(c.ref);
    }
    const r = now.length ? await updateRefs(oldPlace, now.map((t) => ({ ref: t.name, new: null, old: t.oid })), zero, agent) : { ok: true };
    // Emptied: anything there next round was written after this. Else it moved again under us.
    seen = r.ok ? new Map() : new Map(now.map((t) => [t.name, t.oid]));
    // A ref made between the listing and the guards fails them: another round.
    if (r.ok && (await guard())) return { late, conflicts };
  }
  fail("conflict", `the coordination refs in ${oldPlace} kept changing while they were moved: stop the processes still writing there (MCP servers, dashboards, workers started before the move) and run the command again`);
}

/** The guards (GUARDS) in the repository; false when a ref under a family was made meanwhile. */
export async function placeGuards(cwd: string, store: string, zero: string, agent?: string): Promise<boolean> {
  const text = `git-handoff keeps this repository's coordination refs in a separate store: ${store}\n(git handoff store; git handoff store --shared moves them back)\n`;
  const blob = await git(["hash-object", "-w", "--stdin"], { cwd, input: text });
  if (blob.code !== 0) fail("environment", `git hash-object failed: ${firstLine(blob.stderr)}`);
  const oid = blob.stdout.trim();
  const present = await guardsIn(cwd);
  const updates = GUARDS.filter((g) => present.get(g) !== oid).map((g) => ({ ref: g, new: oid, old: present.get(g) ?? null }));
  if (!updates.length) return true;
  try {
    return (await updateRefs(cwd, updates, zero, agent)).ok;
  } catch (e) {
    // A ref a writer made under a family since the sweep emptied it is in the way of that family's
    // guard, which git words as a file in the way (refs.ts: corrupt state, nothing a retry changes).
    // Here it is the race the sweep's next round carries over.
    if (e instanceof HandoffError && e.code === "corrupt_state" && (await listFamilies(cwd)).length) return false;
    throw e;
  }
}

async function removeGuards(cwd: string, zero: string, agent?: string): Promise<void> {
  const present = await guardsIn(cwd);
  await mustUpdate(cwd, [...present].map(([ref, oid]) => ({ ref, new: null, old: oid })), zero, agent);
}

async function guardsIn(cwd: string): Promise<Map<string, string>> {
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", ...GUARDS], { cwd });
  const out = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const [oid, name] = line.split(" ");
    if (oid && name && GUARDS.includes(name)) out.set(name, oid);
  }
  return out;
}

/**
 * A separate store's repository as a finished move leaves it: no coordination ref among its own
 * (what an interrupted move or an older git-handoff left is carried over where it is newer than the
 * store's, by ancestry, and removed), and the guards in place.
 */
async function tidy(repo: RepoInfo, agent?: string): Promise<{ moved: number; late_writes: number; conflicts: string[] }> {
  const cwd = cwdOf(repo);
  const zero = zeroOf(repo);
  const left = await listFamilies(cwd);
  const guards = await guardsIn(cwd);
  if (!left.length && guards.size === GUARDS.length) return { moved: 0, late_writes: 0, conflicts: [] };
  const { moved, conflicts } = await carryNewer(left, cwd, repo.storeDir, `${repo.storeDir}/objects`, zero, agent);
  if (left.length) await mustUpdate(cwd, left.map((t) => ({ ref: t.name, new: null, old: t.oid })), zero, agent);
  await placeGuards(cwd, repo.storeDir, zero, agent);
  return { moved, late_writes: left.length ? 1 : 0, conflicts };
}

/**
 * The shared layout's counterpart: a store a move back had renamed out of the way and not yet
 * swept when it was stopped (`handoff-store.git.old-<pid>`) may hold writes made during that
 * move; what is newer there than here is carried over, then it is removed.
 */
async function tidyOldStores(repo: RepoInfo, agent?: string): Promise<{ moved: number; late_writes: number; conflicts: string[] }> {
  const out = { moved: 0, late_writes: 0, conflicts: [] as string[] };
  for (const old of oldStores(repo)) {
    const left = await listFamilies(old);
    const r = await carryNewer(left, old, cwdOf(repo), `${repo.commonDir}/objects`, zeroOf(repo), agent);
    out.moved += r.moved;
    out.late_writes++;
    out.conflicts.push(...r.conflicts);
    rmSync(old, { recursive: true, force: true });
  }
  return out;
}

/** Stores renamed out of the way by a move back that did not finish (see tidyOldStores). */
export function oldStores(repo: RepoInfo): string[] {
  let names: string[];
  try {
    names = readdirSync(repo.commonDir);
  } catch {
    return [];
  }
  return names.filter((n) => /^handoff-store\.git\.old-\d+$/.test(n)).map((n) => `${repo.commonDir}/${n}`);
}

/**
 * Refs left elsewhere (`left`, read from `from`) carried into `to` where they are newer than its
 * own by ancestry; older ones are dropped, diverged ones reported (the destination's value stands).
 */
async function carryNewer(left: RefTip[], from: string, to: string, toObjects: string, zero: string, agent?: string): Promise<{ moved: number; conflicts: string[] }> {
  const here = new Map((await listFamilies(to)).map((t) => [t.name, t.oid]));
  const conflicts: string[] = [];
  const carry = left.filter((t) => t.oid !== here.get(t.name));
  await copyObjects(from, toObjects, carry);
  let moved = 0;
  for (const t of carry) {
    const there = here.get(t.name) ?? null;
    // The destination's value already follows from the leftover: the leftover is only older.
    if (there && (await isAncestor(to, t.oid, there))) continue;
    if (there && !(await isAncestor(to, there, t.oid))) {
      conflicts.push(t.name);
      continue;
    }
    if ((await updateRefs(to, [{ ref: t.name, new: t.oid, old: there }], zero, agent)).ok) moved++;
    else conflicts.push(t.name);
  }
  return { moved, conflicts };
}

const zeroOf = (repo: RepoInfo) => "0".repeat(repo.objectFormat === "sha256" ? 64 : 40);

async function isAncestor(cwd: string, a: string, b: string): Promise<boolean> {
  return (await git(["merge-base", "--is-ancestor", a, b], { cwd })).code === 0;
}

/** How the layout stands, for doctor: coordination refs among the repository's own, guards, the store. */
export async function layoutHealth(repo: RepoInfo): Promise<{ layout: Layout; here: number; guards: number; store: number }> {
  const separate = repo.storeDir !== repo.commonDir;
  const here = (await listFamilies(cwdOf(repo))).length;
  return { layout: separate ? "separate" : "shared", here, guards: (await guardsIn(cwdOf(repo))).size, store: separate ? (await listFamilies(repo.storeDir)).length : here };
}

async function listFamilies(cwd: string): Promise<RefTip[]> {
  const r = await git(["for-each-ref", "--format=%(objectname) %(refname)", ...FAMILIES], { cwd });
  if (r.code !== 0) fail("environment", `git for-each-ref failed in ${cwd}: ${firstLine(r.stderr)}`);
  const tips: RefTip[] = [];
  for (const line of r.stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) tips.push({ oid: line.slice(0, sp), name: line.slice(sp + 1) });
  }
  return tips;
}

/** A bare git dir whose config includes the repository's (remotes, credentials, hooks path) and whose objects fall back on it. */
function makeStore(repo: RepoInfo, dir: string): void {
  mkdirSync(`${dir}/objects/info`, { recursive: true });
  mkdirSync(`${dir}/objects/pack`, { recursive: true });
  mkdirSync(`${dir}/refs/heads`, { recursive: true });
  const sha256 = repo.objectFormat === "sha256";
  // The include comes first, so the store's own settings after it win (git: the last value read).
  // The repository format is read from this file alone (git does not follow includes for it).
  const config = [
    "[include]",
    `\tpath = ${configQuoted(`${repo.commonDir}/config`)}`,
    "[core]",
    `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
    "\tbare = true",
    // The repository's refs name code only, never a coordination object: not worth listing (with
    // a for-each-ref process apiece, twice per fetch) as tips the store already has.
    "\talternateRefsCommand = true",
    ...(sha256 ? ["[extensions]", "\tobjectformat = sha256"] : []),
    "",
  ].join("\n");
  writeFileSync(`${dir}/config`, config);
  writeFileSync(`${dir}/objects/info/alternates`, `${repo.commonDir}/objects\n`);
  writeFileSync(`${dir}/description`, "git-handoff's coordination refs (git handoff store)\n");
}

/** A value as git's config reads it back verbatim: quoted (a `#` or `;` would start a comment), `\` and `"` escaped. */
export function configQuoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Packs every object the tips reach from `from` into the object folder `objects` (its own, not borrowed). */
async function copyObjects(from: string, objects: string, tips: RefTip[]): Promise<void> {
  if (!tips.length) return;
  const r = await git(["pack-objects", "--revs", "--quiet", `${objects}/pack/pack`], { cwd: from, input: [...new Set(tips.map((t) => t.oid))].join("\n") + "\n" });
  if (r.code !== 0) fail("environment", `git pack-objects failed copying the coordination objects: ${firstLine(r.stderr)}`);
}

/** The refs as git's packed-refs file: sorted by name in byte order, as git writes it. */
function writePacked(dir: string, tips: RefTip[]): void {
  const sorted = [...tips].sort((a, b) => (Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))));
  writeFileSync(`${dir}/packed-refs`, "# pack-refs with: sorted \n" + sorted.map((t) => `${t.oid} ${t.name}\n`).join(""));
}

async function mustUpdate(cwd: string, updates: RefUpdate[], zero: string, agent?: string): Promise<void> {
  if (!updates.length) return;
  const r = await updateRefs(cwd, updates, zero, agent);
  if (!r.ok) fail("conflict", `could not write the coordination refs in ${cwd}: ${r.message}; nothing was switched, run the command again`);
}
