// A read-only map shared between versions: each version holds the entries of the one it came from
// (`base`, never changed once shared) and its own changes on top, folded into a new base once they
// pass a bound. The lease groups of a set are derived from those of the set before at every write
// and every foreign lease change learned: copying the maps of a thousand tasks and agents each time
// (`new Map(from)`) was a tenth of a write's time at 1,000 leases, and most of its garbage. Pure.

const GONE: unique symbol = Symbol("gone");

export class SharedMap<K, V extends object> implements ReadonlyMap<K, V> {
  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    private readonly delta: ReadonlyMap<K, V | typeof GONE>,
    readonly size: number,
  ) {}

  /** `m` as a shared map, without copying it: the caller never changes `m` afterwards. */
  static of<K, V extends object>(m: ReadonlyMap<K, V>): SharedMap<K, V> {
    return m instanceof SharedMap ? m : new SharedMap(m, new Map(), m.size);
  }

  get(key: K): V | undefined {
    if (this.delta.size) {
      const d = this.delta.get(key);
      if (d !== undefined) return d === GONE ? undefined : d;
    }
    return this.base.get(key);
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /**
   * This map with `changes` applied (a value: set; undefined: removed), sharing this one's entries.
   * Costs the changes kept so far, not the size of the map, except when they are folded in: once
   * every ~size/16 changes, so a change costs a few entries' copy on average.
   */
  with(changes: ReadonlyMap<K, V | undefined>): SharedMap<K, V> {
    if (!changes.size) return this;
    const delta = new Map(this.delta);
    let size = this.size;
    for (const [key, value] of changes) {
      const had = this.get(key) !== undefined;
      if (value === undefined) {
        if (this.base.has(key)) delta.set(key, GONE);
        else delta.delete(key);
      } else delta.set(key, value);
      size += (value !== undefined ? 1 : 0) - (had ? 1 : 0);
    }
    if (delta.size <= Math.max(32, this.base.size >> 4)) return new SharedMap(this.base, delta, size);
    const flat = new Map<K, V>();
    for (const [key, value] of this.base) {
      const d = delta.get(key);
      if (d === undefined) flat.set(key, value);
      else if (d !== GONE) flat.set(key, d);
    }
    for (const [key, d] of delta) if (d !== GONE && !this.base.has(key)) flat.set(key, d);
    return new SharedMap(flat, new Map(), flat.size);
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) {
      if (!this.delta.has(key)) yield [key, value];
    }
    for (const [key, d] of this.delta) if (d !== GONE) yield [key, d];
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(f: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) f.call(thisArg, value, key, this);
  }
}
