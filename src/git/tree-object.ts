// Git's tree and commit objects as bytes: the one reader and writer of tree entries and commit
// headers that the store (records, lease trees, bundles), the receive checks and the in-process
// push share, so a tree that is not well formed means the same thing to each of them.

export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
}

const SPACE = 0x20;

/**
 * A tree object's entries in stored order, or null when it is not well formed: an entry without
 * its space, NUL or whole id, a mode that is not octal digits, an empty name or one holding `/`
 * (git's tree walk dies on the first kinds, its fsck calls the last two errors). Names decode as
 * UTF-8, or with `latin1` byte for byte (two different names then never decode alike: a caller
 * comparing trees by name needs that).
 */
export function treeEntries(data: Buffer, oidBytes: number, names: "utf8" | "latin1" = "utf8"): TreeEntry[] | null {
  const out: TreeEntry[] = [];
  const ok = eachEntry(data, oidBytes, names, (at, sp, name, oid) => void out.push({ mode: data.toString("latin1", at, sp), name, oid }));
  return ok ? out : null;
}

/** A tree's entries as name -> id (records and bundles: modes are checked where they matter), or null as treeEntries. */
export function treeIds(data: Buffer, oidBytes: number): Map<string, string> | null {
  const out = new Map<string, string>();
  return eachEntry(data, oidBytes, "utf8", (_at, _sp, name, oid) => void out.set(name, oid)) ? out : null;
}

/**
 * Walks a tree's entries (where the entry and its mode's space are, the decoded name, the id in
 * hex); false as soon as one is not well formed. Every look stays within its entry, so a wide
 * tree costs one pass.
 */
function eachEntry(data: Buffer, oidBytes: number, names: "utf8" | "latin1", each: (at: number, sp: number, name: string, oid: string) => void): boolean {
  for (let i = 0; i < data.length; ) {
    let sp = i;
    while (sp < data.length && sp - i <= 6 && data[sp]! >= 0x30 && data[sp]! <= 0x37) sp++;
    if (sp === i || sp - i > 6 || data[sp] !== SPACE) return false;
    const nul = data.indexOf(0, sp + 1);
    if (nul <= sp + 1 || nul + 1 + oidBytes > data.length) return false;
    const name = data.toString(names, sp + 1, nul);
    // "/" is one byte in UTF-8 and never part of another character's bytes, so the decoded name shows it.
    if (name.includes("/")) return false;
    each(i, sp, name, data.toString("hex", nul + 1, nul + 1 + oidBytes));
    i = nul + 1 + oidBytes;
  }
  return true;
}

const FOLDER_MODE = "40000";

/** A tree object of `entries` in git's order: by the bytes of the names, a folder's as if it ended in `/`. */
export function encodeTree(entries: readonly TreeEntry[]): Buffer {
  const keyed = entries.map((e) => ({ e, key: Buffer.from(e.mode === FOLDER_MODE ? `${e.name}/` : e.name, "utf8") }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return Buffer.concat(keyed.flatMap(({ e }) => [Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.oid, "hex")]));
}

/** What a commit's header names: its tree (null if none), its parents, its committer's time in seconds. */
export interface CommitHeader {
  tree: string | null;
  parents: string[];
  time: number;
}

/** Reads a commit's header lines (the text before its first blank line). */
export function commitHeader(header: string): CommitHeader {
  let tree: string | null = null;
  let time = 0;
  const parents: string[] = [];
  for (const line of header.split("\n")) {
    if (line.startsWith("tree ")) tree = line.slice(5);
    else if (line.startsWith("parent ")) parents.push(line.slice(7));
    else if (line.startsWith("committer ")) time = Number(line.split(" ").at(-2));
  }
  return { tree, parents, time };
}

/** A commit object's header, read from its bytes (what comes before the first blank line). */
export function commitLinks(data: Buffer): CommitHeader {
  return commitHeader(data.toString("latin1", 0, Math.max(0, data.indexOf("\n\n"))));
}
