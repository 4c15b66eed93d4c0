// Noticing that coordination state changed, cheaply enough to run all day: git replaces a ref file
// by renaming a lock file over it, which changes its folder's mtime, and rewrites packed-refs the
// same way. So each tick stats a handful of folders and one file; only when one moved are the
// tips listed (in-process) and compared. A repository on another ref backend is polled through
// the store's listing instead, less often.
import { readdirSync, statSync } from "node:fs";
import type { RefTip } from "../git/refs.ts";
import { SEPARATE_STORE, storeDirOf } from "../git/repo.ts";

/** Refs whose changes the page shows: coordination state, this clone's local area, tracking refs, branches. */
const ROOTS = ["refs/handoff/", "refs/handoff-local/", "refs/handoff-remotes/", "refs/heads/"];

export interface Watcher {
  stop(): void;
}

/**
 * `common`: the repository's common git dir (branches); the coordination refs are watched where
 * they live, looked up again whenever anything moved (a separate store, separate-store.ts, may
 * come or go). `listRefs`: the refs under a prefix, from the dashboard's current Store (it may be
 * reopened).
 */
export function watchRefs(common: string, listRefs: (prefix: string) => Promise<RefTip[]>, onChange: (key: string) => void, opts: { intervalMs?: number; filesBackend?: boolean } = {}): Watcher {
  let dirs: string[] = [];
  let stamps = "";
  let key = "";
  let busy = false;

  let store = storeDirOf(common);
  const placeOf = (root: string) => (root === "refs/heads/" ? common : store);
  const rediscover = () => {
    store = storeDirOf(common);
    // The store's HEAD: there (a time) or not (0), so a move is noticed.
    const found: string[] = [`${common}/refs`, `${store}/refs`, `${common}/${SEPARATE_STORE}/HEAD`];
    const walk = (dir: string) => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      found.push(dir);
      for (const e of entries) if (e.isDirectory()) walk(`${dir}/${e.name}`);
    };
    for (const r of ROOTS) walk(`${placeOf(r)}/${r.slice(0, -1)}`);
    dirs = found;
  };
  const stampOf = () => {
    const parts: number[] = [];
    for (const p of [...dirs, `${common}/packed-refs`, `${store}/packed-refs`]) {
      try {
        parts.push(statSync(p).mtimeMs);
      } catch {
        parts.push(0);
      }
    }
    return parts.join(",");
  };
  const tipsKey = async () => {
    const lists = await Promise.all(ROOTS.map((r) => listRefs(r)));
    return lists.flat().map((t) => `${t.name} ${t.oid}`).join("\n");
  };

  const files = opts.filesBackend ?? true;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      if (files) {
        const s = stampOf();
        if (s === stamps) return;
        rediscover();
        stamps = stampOf();
      }
      const k = await tipsKey();
      if (k !== key) {
        key = k;
        onChange(k);
      }
    } catch {
      /* a ref read that raced a writer: the next tick reads again */
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, opts.intervalMs ?? (files ? 300 : 2000));
  timer.unref();
  void tick();
  return { stop: () => clearInterval(timer) };
}
