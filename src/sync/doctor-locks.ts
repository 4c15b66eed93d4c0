// doctor's lock checks: git lock files under the coordination namespaces that no git process
// holds any more (stale by age), and our own lock files whose holder is gone. `--repair` removes
// them, a git lock only once past the stale age.
import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { coordinationLocks, removeStaleLock, STALE_GIT_LOCK_MS } from "../git/git-locks.ts";
import { holderGone, readOwner } from "../git/owned-lock.ts";
import { fetchLockDir } from "./tracking.ts";
import type { Check } from "./doctor-check.ts";
import type { Store } from "../store/store.ts";

export function lockChecks(store: Store, repair: boolean): Check[] {
  return [gitLocks(store, repair), ownLocks(store, repair)];
}

function gitLocks(store: Store, repair: boolean): Check {
  const all = coordinationLocks(store.repo.storeDir);
  const stale = all.filter((l) => l.ageMs >= STALE_GIT_LOCK_MS);
  const held = all.length - stale.length;
  const inUse = held ? `; ${held} held right now (younger than ${STALE_GIT_LOCK_MS / 1000} s, left alone)` : "";
  if (!stale.length) return { name: "git-locks", status: "ok", detail: `no stale git lock files under refs/handoff/ or packed-refs.lock${inUse}` };
  const list = stale.map((l) => `${l.name} stale for ${Math.round(l.ageMs / 1000)} s`).join(", ");
  if (!repair) {
    return { name: "git-locks", status: "fail", detail: `git lock file(s) left by a killed git process, every write of that ref fails on them: ${list}`, fix: "git handoff doctor --repair" };
  }
  const removed = stale.filter((l) => removeStaleLock(l));
  return {
    name: "git-locks",
    status: removed.length === stale.length ? "ok" : "fail",
    detail: `removed ${removed.length} of ${stale.length} stale git lock file(s): ${list}${inUse}`,
    ...(removed.length === stale.length ? {} : { fix: `remove the rest by hand (rm ${stale.filter((l) => !removed.includes(l)).map((l) => l.path).join(" ")})` }),
  };
}

function ownLocks(store: Store, repair: boolean): Check {
  const dir = fetchLockDir(store);
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".lock"));
  } catch {
    /* no folder: no locks */
  }
  const dead: string[] = [];
  for (const n of names) {
    const owner = readOwner(join(dir, n));
    if (owner && holderGone(owner)) dead.push(`${n} (process ${owner.pid} is gone)`);
  }
  if (!dead.length) return { name: "handoff-locks", status: "ok", detail: names.length ? `${names.length} lock(s) in ${dir}, each held by a live process` : `no lock files in ${dir}` };
  if (repair) {
    // A later acquire breaks these at once anyway; removing them here is tidiness.
    for (const n of names) {
      const p = join(dir, n);
      const owner = readOwner(p);
      if (owner && holderGone(owner)) {
        try {
          unlinkSync(p);
        } catch {
          /* broken meanwhile */
        }
      }
    }
    return { name: "handoff-locks", status: "ok", detail: `removed lock(s) of gone processes: ${dead.join(", ")}` };
  }
  return { name: "handoff-locks", status: "warn", detail: `lock(s) of gone processes (the next command breaks them at once): ${dead.join(", ")}`, fix: "git handoff doctor --repair" };
}
