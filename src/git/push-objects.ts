// What a push sends: the objects a remote may lack for a few ref updates, found by a walk of this
// clone's objects (no `git rev-list`, no `git pack-objects`). Shared by the two in-process pushes,
// to a remote on this machine's disk (path-remote.ts) and over smart HTTP (http-remote.ts).
import type { GitObject } from "./object-reader.ts";
import { commitLinks, treeEntries } from "./tree-object.ts";

/** The objects of this clone a push reads. */
export interface ObjectSource {
  format: "sha1" | "sha256";
  /** An object of this clone's store, or null. */
  read(oid: string): Promise<GitObject | null>;
  /** Whether this process wrote (or found) the object lately: its content is in memory. */
  recent(oid: string): boolean;
}

/** Bounds on what one push sends in process: a claim sends under ten objects in one commit or two. */
const MAX_COMMITS = 64;
const MAX_OBJECTS = 4096;

/**
 * Every object reachable from the updates' new tips that the remote may lack: a commit and what
 * its tree has that its parent's does not, down the first parents until the ref's value on the
 * remote (whose objects the remote has, all of them: the compare-and-swap makes sure it is still
 * there) or a root. Null when anything is beyond this (a merge, a tag, an unreadable object,
 * more than `maxObjects`). An object this process has just written is sent without a look at the
 * parent (if the remote has it, writing it is a stat); the parent's trees are read only for the
 * entries that are not, which spares a one-shot claim the `git cat-file` that a parent from a
 * pack would need. (folder-fetch.ts walks the same way in the other direction.)
 */
export async function missingObjects(source: ObjectSource, updates: { new: string; expected: string | null }[], maxObjects = MAX_OBJECTS): Promise<Map<string, GitObject> | null> {
  const walk = new Walk(source, maxObjects);
  try {
    for (const u of updates) {
      let commit: string | null = u.new;
      for (let n = 0; commit !== null && commit !== u.expected; n++) {
        if (n >= MAX_COMMITS) return null;
        const { tree, parents } = commitLinks(walk.add(commit, await walk.read(commit, "commit")).data);
        if (!tree || parents.length > 1) return null;
        const parent: string | null = parents[0] ?? null;
        await walk.tree(tree, once(async () => (parent === null ? null : commitLinks((await walk.read(parent, "commit")).data).tree)));
        commit = parent;
      }
    }
  } catch (e) {
    if (e === BEYOND) return null;
    throw e;
  }
  return walk.found;
}

/** Thrown inside a walk for what it leaves to git. */
const BEYOND = Symbol("beyond");

class Walk {
  readonly found = new Map<string, GitObject>();
  private readonly oidBytes: number;

  constructor(
    private readonly source: ObjectSource,
    private readonly maxObjects: number,
  ) {
    this.oidBytes = source.format === "sha256" ? 32 : 20;
  }

  async read(oid: string, type: GitObject["type"]): Promise<GitObject> {
    const o = await this.source.read(oid);
    if (!o || o.type !== type) throw BEYOND;
    return o;
  }

  add(oid: string, o: GitObject): GitObject {
    this.found.set(oid, o);
    if (this.found.size > this.maxObjects) throw BEYOND;
    return o;
  }

  /** Tree `now` and what it has that `before` (its counterpart in the parent, read only if needed) does not. */
  async tree(now: string, before: () => Promise<string | null>): Promise<void> {
    if (this.found.has(now)) return;
    if (!this.source.recent(now) && (await before()) === now) return;
    const entries = entriesByName(this.add(now, await this.read(now, "tree")).data, this.oidBytes);
    const old = once(async () => {
      const b = await before();
      return b === null ? null : entriesByName((await this.read(b, "tree")).data, this.oidBytes);
    });
    for (const [name, e] of entries) {
      if (this.found.has(e.oid) || e.mode === "160000") continue; // a submodule's commit is never sent
      if (!this.source.recent(e.oid)) {
        const was = (await old())?.get(name);
        if (was && was.oid === e.oid && was.mode === e.mode) continue;
      }
      if (e.mode === "40000") {
        await this.tree(
          e.oid,
          once(async () => {
            const was = (await old())?.get(name);
            return was?.mode === "40000" ? was.oid : null;
          }),
        );
      } else this.add(e.oid, await this.read(e.oid, "blob"));
    }
  }
}

/** `fn`, run at most once; later calls share its answer. */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/** A tree's entries by name, byte for byte (a tree that is not well formed is git's to judge). */
function entriesByName(data: Buffer, oidBytes: number): Map<string, { mode: string; oid: string }> {
  const entries = treeEntries(data, oidBytes, "latin1");
  if (!entries) throw BEYOND;
  return new Map(entries.map((e) => [e.name, { mode: e.mode, oid: e.oid }]));
}
