// doctor's clock check: this clone's estimated offset, in whichever direction, against
// max_clock_skew (skew.ts has the estimate and where it comes from).
import { formatDuration } from "../core/duration.ts";
import { skewRefusal } from "../core/clock-skew.ts";
import type { Check } from "./doctor-check.ts";
import { remoteTimeoutMs } from "./remote-budget.ts";
import { offsetOf, readClockFile, readHttpDate } from "./skew.ts";
import type { Store } from "../store/store.ts";
import { trackingPrefix } from "../git/tracking-ref.ts";
import { git } from "../git/run.ts";

export async function skewCheck(store: Store, remote: string): Promise<Check> {
  const max = store.config.maxClockSkewMs;
  // doctor takes a fresh reading of the server's clock where the transport shows it.
  const reading = await readHttpDate(store, remote, await remoteTimeoutMs(store));
  const offset = reading
    ? { offsetMs: reading.offset_ms, uncertaintyMs: reading.uncertainty_ms, source: "http-date" as const, samples: 1 }
    : offsetOf(readClockFile(store, remote));
  const future = await newestEventAhead(store, remote);
  const behindHint = future > max
    ? { name: "clock", status: "warn" as const, detail: `the remote's newest event is ${formatDuration(future)} in this clock's future: this clock is behind (or its writer's ahead)`, fix: "set the system clock right (NTP); leases are judged by wall-clock time" }
    : null;
  if (!offset) {
    if (behindHint) return behindHint;
    const seen = readClockFile(store, remote).sightings.length;
    return {
      name: "clock",
      status: "ok",
      detail: `no estimate of this clock's offset yet (${seen ? `${seen} sighting(s), none usable` : "no other agent's commits seen between two syncs"}; ssh and git:// do not show the server's time); max_clock_skew ${formatDuration(max)}`,
      fix: "git handoff sync (twice, a little apart) once other clones are writing",
    };
  }
  const off = Math.abs(offset.offsetMs);
  const against = offset.source === "http-date" ? `the sync remote ${remote} (its HTTP Date header)` : `${offset.samples} other agent(s) (their commits, when first seen)`;
  const way = off < 1000 ? "within a second of" : `${formatDuration(off)} ${offset.offsetMs > 0 ? "ahead of" : "behind"}`;
  const detail = `this clock is ${way} ${against}, give or take ${formatDuration(offset.uncertaintyMs)}; max_clock_skew ${formatDuration(max)}`;
  if (skewRefusal(max, offset, remote)) {
    return {
      name: "clock",
      status: "fail",
      detail: `${detail}: exclusive grants through the remote are refused (clock_skew) until it is fixed`,
      fix: "set the system clock right (NTP: timedatectl set-ntp true)",
    };
  }
  if (behindHint && offset.offsetMs > -max) return { ...behindHint, detail: `${detail}; but ${behindHint.detail}` };
  if (off > max / 2) return { name: "clock", status: "warn", detail: `${detail}: close to the limit`, fix: "set the system clock right (NTP)" };
  return { name: "clock", status: "ok", detail };
}

/** How far the newest commit among the remote's refs (as last fetched) lies in this clock's future (ms; <= 0: not). */
async function newestEventAhead(store: Store, remote: string): Promise<number> {
  const r = await git(["for-each-ref", "--sort=-committerdate", "--count=1", "--format=%(committerdate:unix)", trackingPrefix(remote)], { cwd: store.storeCwd });
  const t = Number(r.stdout.trim());
  return r.code === 0 && t > 0 ? t * 1000 - store.now().getTime() : 0;
}
