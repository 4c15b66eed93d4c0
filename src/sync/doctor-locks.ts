// doctor's lock checks: git lock files under the coordination namespaces that no git process
// holds any more (stale by age), and our own lock files whose holder is gone or that record no
// holder. `--repair` removes them, a git lock or an owner-less one only once past its stale age.
import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { isFolder } from "../git/safe-file.ts";
import { join } from "node:path";
import { coordinationLocks, removeStaleLock, STALE_GIT_LOCK_MS } from "../git/git-locks.ts";
import { ANONYMOUS_STALE_MS, holderGone, readOwner } from "../git/owned-lock.ts";
import { namesOfDeadProcesses } from "../git/process-alive.ts";
import { fetchLockDir } from "./fetch-lock-dir.ts";
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
  // A link in place of the folder is not followed: what it names holds no lock of ours to remove.
  const ours = isFolder(dir);
  try {
    if (ours) names = readdirSync(dir).filter((n) => n.endsWith(".lock"));
  } catch {
    /* no folder: no locks */
  }
  const now = Date.now();
  const dead: { name: string; why: string; removable: boolean }[] = [];
  for (const n of names) {
    const p = join(dir, n);
    const owner = readOwner(p);
    if (owner) {
      if (holderGone(owner)) dead.push({ name: n, why: `process ${owner.pid} is gone`, removable: true });
      continue;
    }
    // No owner record: locks are put in place with theirs (owned-lock.ts placeLock), so this one
    // was left by an older build killed between creating it and writing its owner.
    const age = ageOf(p, now);
    if (age !== null) dead.push({ name: n, why: `no owner recorded, ${Math.round(age / 1000)} s old`, removable: age >= ANONYMOUS_STALE_MS });
  }
  // Owner records a killed process had not linked into place yet: nothing reads them.
  if (repair && ours) for (const n of leftRecords(dir)) unlinkQuiet(join(dir, n));
  const live = names.length - dead.length;
  if (!dead.length) return { name: "handoff-locks", status: "ok", detail: names.length ? `${names.length} lock(s) in ${dir}, each held by a live process` : `no lock files in ${dir}` };
  const list = dead.map((d) => `${d.name} (${d.why})`).join(", ");
  if (repair) {
    // A later acquire breaks these anyway (at once, or an owner-less one past its age); removing them here is tidiness.
    const removed = dead.filter((d) => d.removable && removeIfStill(join(dir, d.name), now));
    const kept = dead.filter((d) => !removed.includes(d));
    return {
      name: "handoff-locks",
      status: kept.length ? "warn" : "ok",
      detail: `removed ${removed.length} stale lock(s): ${list}${kept.length ? `; kept ${kept.map((d) => d.name).join(", ")} (younger than ${ANONYMOUS_STALE_MS / 1000} s)` : ""}${live ? `; ${live} held by a live process` : ""}`,
      ...(kept.length ? { fix: "git handoff doctor --repair (again in a few seconds)" } : {}),
    };
  }
  return { name: "handoff-locks", status: "warn", detail: `stale lock(s) (the next command breaks them): ${list}`, fix: "git handoff doctor --repair" };
}

function ageOf(path: string, now: number): number | null {
  try {
    return Math.max(0, now - lstatSync(path).mtimeMs);
  } catch {
    return null;
  }
}

/** Owner records a process killed before linking them into place left (`<lock>.new-<pid>-...`). */
function leftRecords(dir: string): string[] {
  return namesOfDeadProcesses(dir, (n) => {
    const m = /\.lock\.new-(\d+)-/.exec(n);
    return m ? Number(m[1]) : null;
  });
}

/** Removes a stale lock unless another process took it meanwhile (then it has a live owner). */
function removeIfStill(path: string, now: number): boolean {
  const owner = readOwner(path);
  if (owner && !holderGone(owner)) return false;
  if (!owner && (ageOf(path, now) ?? 0) < ANONYMOUS_STALE_MS) return false;
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone */
  }
}
