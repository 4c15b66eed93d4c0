// What changed between two `leases/` folder trees, found from their bytes. A long-running process
// reads every new tip of refs/handoff/leases that other processes write: eight racers at 1,000
// leases each read a folder of ~1,000 entries after every few foreign claims, and walking it entry
// by entry (names sliced, ids decoded, maps filled) was half of what learning a foreign claim
// cost. Two tips a few claims apart share almost all their bytes, so the runs they share are
// skipped by native compares and only the entries around a difference are parsed.
//
// Pure: buffers in, changes out. Anything unusual in the new tree (an entry that is not a plain
// file with an ASCII name, names out of git's order, too many changes) returns null and the caller
// reads the whole tree, which says what is wrong with it.

/** A folder tree's bytes with where each entry starts and its name (its entries in git's order). */
export interface FolderBytes {
  data: Buffer;
  /** starts[i]: where entry i begins; starts[names.length] is data.length. */
  starts: Int32Array;
  names: readonly string[];
}

/** A file of the new tree that is not byte for byte in the old (its new blob), or one gone (oid null). */
export interface FolderChange {
  name: string;
  oid: string | null;
}

const MODE = Buffer.from("100644 ", "latin1");

/**
 * The changes from `old` to the tree `data`, and `data` as FolderBytes; null past `max` changes
 * or when `data` is not a tree of plain files with ASCII names in strictly increasing order where
 * it differs from `old` (the runs it shares with `old` are `old`'s, which was such a tree).
 */
export function diffFolder(old: FolderBytes, data: Buffer, oidBytes: number, max: number): { changes: FolderChange[]; next: FolderBytes } | null {
  const n = old.names.length;
  const changes: FolderChange[] = [];
  const starts: number[] = [];
  const names: string[] = [];
  let i = 0; // the old tree's next entry
  let p = 0; // where the new tree's next entry starts
  let last = ""; // the new tree's last name so far
  for (;;) {
    const po = old.starts[i]!;
    const shared = commonLength(old.data, po, data, p);
    // The old entries wholly inside the shared bytes are the new tree's next entries.
    const j = lastStartWithin(old.starts, i, n, po + shared);
    if (j > i) {
      // Holds whenever `old` is in order (the merge below keeps it); checked all the same, as cheap.
      if (!(last < old.names[i]!)) return null;
      for (let k = i; k < j; k++) {
        starts.push(p + old.starts[k]! - po);
        names.push(old.names[k]!);
      }
      last = old.names[j - 1]!;
      p += old.starts[j]! - po;
      i = j;
    }
    const oldName = i < n ? old.names[i]! : null;
    if (p >= data.length && oldName === null) break;
    if (changes.length >= max) return null;
    const entry = p < data.length ? plainEntry(data, p, oidBytes) : null;
    if (p < data.length && !entry) return null;
    if (entry && (oldName === null || entry.name <= oldName)) {
      if (!(last < entry.name)) return null;
      changes.push({ name: entry.name, oid: entry.oid });
      starts.push(p);
      names.push(entry.name);
      last = entry.name;
      p = entry.end;
      if (entry.name === oldName) i++; // the same file with another blob
    } else {
      changes.push({ name: oldName!, oid: null });
      i++;
    }
  }
  starts.push(data.length);
  return { changes, next: { data, starts: Int32Array.from(starts), names } };
}

/** The FolderBytes of a tree whose entries are known: their names in order and each entry's length. */
export function folderBytes(data: Buffer, names: readonly string[], lengths: readonly number[]): FolderBytes {
  const starts = new Int32Array(names.length + 1);
  for (let k = 0; k < lengths.length; k++) starts[k + 1] = starts[k]! + lengths[k]!;
  return { data, starts, names };
}

/** How many bytes from `a[ai]` and `b[bi]` on are the same: native compares of growing chunks, then a binary search in the chunk that differs. */
function commonLength(a: Buffer, ai: number, b: Buffer, bi: number): number {
  const max = Math.min(a.length - ai, b.length - bi);
  let n = 0;
  for (let step = 64; n < max; step = Math.min(step * 2, 8192)) {
    const k = Math.min(step, max - n);
    if (a.compare(b, bi + n, bi + n + k, ai + n, ai + n + k) === 0) {
      n += k;
      continue;
    }
    // The first k bytes differ somewhere: [n, n + lo) is known equal, [n, n + hi) not.
    let lo = 0;
    let hi = k;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (a.compare(b, bi + n + lo, bi + n + mid, ai + n + lo, ai + n + mid) === 0) lo = mid;
      else hi = mid;
    }
    return n + lo;
  }
  return n;
}

/** The largest k in [from, n] with starts[k] <= at (starts[from] <= at). */
function lastStartWithin(starts: Int32Array, from: number, n: number, at: number): number {
  let lo = from;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The plain file entry at `p` (`100644 <ASCII name>\0<id>`), or null. */
function plainEntry(data: Buffer, p: number, oidBytes: number): { name: string; oid: string; end: number } | null {
  if (p + MODE.length > data.length || data.compare(MODE, 0, MODE.length, p, p + MODE.length) !== 0) return null;
  const nul = data.indexOf(0, p + MODE.length);
  if (nul <= p + MODE.length || nul + 1 + oidBytes > data.length) return null;
  const name = data.toString("latin1", p + MODE.length, nul);
  if (/[^\x00-\x7f]/.test(name)) return null;
  return { name, oid: data.toString("hex", nul + 1, nul + 1 + oidBytes), end: nul + 1 + oidBytes };
}
