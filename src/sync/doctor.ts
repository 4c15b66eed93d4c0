// `git handoff doctor`: one line per check of the repository and its sync remote, with what to do.
import { HandoffError } from "../core/errors.ts";
import { formatDuration } from "../core/duration.ts";
import { eventFromMessage } from "../store/codec.ts";
import { Task } from "../core/task.ts";
import { listRefs } from "../git/refs.ts";
import { configuredRemote } from "../git/configured-remote.ts";
import { pathRemoteStatus } from "../git/path-remote.ts";
import { httpRemoteStatus } from "../git/http-remote.ts";
import { streamRemoteStatus } from "../git/stream-remote.ts";
import { git } from "../git/run.ts";
import { remotePrefix, splitIn, splitPatterns } from "../git/ref-prefix.ts";
import { splitProblem } from "./namespace-split.ts";
import { readRecord } from "../store/codec.ts";
import { readCommit } from "../store/history.ts";
import { listTentative } from "./local-area.ts";
import { remoteTimeoutMs } from "./remote-budget.ts";
import { agentChecks } from "./doctor-agents.ts";
import { buildCheck } from "./doctor-builds.ts";
import type { Store } from "../store/store.ts";
import { corruptTaskFix, taskOfRef, TASKS_PREFIX } from "../store/task-store.ts";
import type { Check } from "./doctor-check.ts";
import { stateChecks } from "./doctor-invariants.ts";
import { hookChecks } from "./doctor-hooks.ts";
import { healthChecks } from "./doctor-health.ts";
import { newerFormatGuard } from "./doctor-newer.ts";

export type { Check } from "./doctor-check.ts";

const STALE_TENTATIVE_MS = 60 * 60_000;

export async function doctor(store: Store, opts: { repair?: boolean } = {}): Promise<Check[]> {
  const checks: Check[] = [];
  const remote = await configuredRemote(store.cwd);
  checks.push(
    remote.name
      ? { name: "remote", status: "ok", detail: `sync remote ${remote.name}${remote.explicit ? "" : " (default)"}${remote.url ? ` at ${remote.url}` : ""}` }
      : { name: "remote", status: "warn", detail: "no sync remote: coordination state stays in this clone", fix: "share it: git handoff remote <name>" },
  );
  checks.push(await refspecs(store));
  const layout = await (await import("./doctor-layout.ts")).layoutCheck(store);
  checks.push(layout);
  // The coordination refs are missing altogether (a separate store removed by hand): every other
  // check would read them, and each read refuses; this one says what to do.
  if (layout.status === "fail") return checks;
  if (remote.name) {
    const { check: reach, split } = await reachability(store, remote.name);
    checks.push(reach);
    if (split) checks.push(split);
    if (reach.status === "ok") checks.push(await (await import("./doctor-skew.ts")).skewCheck(store, remote.name));
    checks.push(...[await (await import("./ref-prefix.ts")).refPrefixCheck(store, remote.name)].filter((c) => c !== null));
    // Which way pushes, listings and fetches go: in process, or through git and why.
    const onDisk = pathRemoteStatus(store.remoteSource, remote.name);
    const stream = streamRemoteStatus(store.remoteSource, remote.name);
    if (onDisk) {
      const fetches = !onDisk.inProcess ? "" : stream?.inProcess ? "; fetches read the few new objects from its files where they are loose, else one git upload-pack of this process's, its pack read and bounded here" : `; fetches go through git fetch because ${stream?.why ?? "its URL is not read here"}`;
      const detail = onDisk.inProcess
        ? `${remote.name} is a repository on this disk (${onDisk.gitDir}): pushes and listings are done in process, as receive-pack and upload-pack would${fetches}`
        : `${remote.name} is on this disk; pushes, listings and fetches go through git because ${onDisk.why}`;
      checks.push({ name: "remote-on-disk", status: "ok", detail });
    } else if (stream) {
      const detail = stream.inProcess
        ? `${remote.name} is ${stream.name}: listings and fetches are one connection of this process's to its git daemon each, the pack read and bounded here; pushes go through git push`
        : `${remote.name} is reached over git://; pushes, listings and fetches go through git because ${stream.why}`;
      checks.push({ name: "remote-over-git", status: "ok", detail });
    }
    const overHttp = httpRemoteStatus(store.remoteSource, remote.name);
    if (overHttp) {
      const detail = overHttp.inProcess
        ? `${remote.name} is ${overHttp.url}: pushes, listings and fetches are requests of this process's (one POST each), as git's send-pack, ls-remote and fetch-pack would make them${overHttp.credentials ? `; the remote asks credentials for ${overHttp.credentials}, given by git's credential helpers (git credential fill)` : ""}`
        : `${remote.name} is reached over HTTP; pushes, listings and fetches go through git because ${overHttp.why}`;
      checks.push({ name: "remote-over-http", status: "ok", detail });
    }
    checks.push(await (await import("./doctor-quarantine.ts")).quarantineCheck(store, remote.name));
  }
  const newer = newerFormatGuard();
  // Repairs first, listed last: the checks after read what --repair left (a loop record at
  // missing objects is removed there, and the loop check of the same run says so).
  const health = await newer.run("health", () => healthChecks(store, opts.repair ?? false));
  checks.push(...(await newer.run("tentative", async () => [await tentative(store)])));
  checks.push(...(await newer.run("loop", async () => [await (await import("./doctor-loop.ts")).loopCheck(store)])));
  checks.push(...(await newer.run("invariants", () => invariants(store))));
  checks.push(...(await stateChecks(store, opts.repair ?? false, newer)), ...(await newer.run("hooks", () => hookChecks(store))), ...(await newer.run("agents", () => agentChecks(store))), ...(await newer.run("builds", async () => [await buildCheck(store)])), ...health);
  checks.push(...(await newer.run("fast-hook-path", async () => (await import("./doctor-hook-path.ts")).hookPathChecks(store))));
  const failed = newer.check();
  if (failed) checks.push(failed);
  return checks;
}

/** Nothing may fetch straight into refs/handoff/* (it would overwrite local state) or push it by default. */
async function refspecs(store: Store): Promise<Check> {
  const r = await git(["config", "--get-regexp", "^remote\\..*\\.(fetch|push)$"], { cwd: store.cwd });
  const bad: string[] = [];
  const odd: string[] = [];
  for (const line of r.stdout.split("\n").filter(Boolean)) {
    const [key, spec = ""] = line.split(" ");
    const dst = spec.slice(spec.indexOf(":") + 1);
    if (key!.endsWith(".fetch") && (dst.startsWith("refs/handoff/") || dst.startsWith("refs/handoff-remotes/"))) bad.push(`${key} ${spec}`);
    if (key!.endsWith(".push") && spec.includes("refs/handoff")) odd.push(`${key} ${spec}`);
  }
  if (bad.length) {
    return { name: "refspecs", status: "fail", detail: `a configured fetch writes into coordination refs: ${bad.join("; ")}`, fix: `remove it: git config --unset ${bad[0]!.split(" ")[0]} (git handoff sync fetches explicitly)` };
  }
  if (odd.length) {
    return { name: "refspecs", status: "warn", detail: `a plain git push also pushes coordination refs: ${odd.join("; ")}`, fix: "git handoff sync pushes them with leases; remove the push refspec" };
  }
  return { name: "refspecs", status: "ok", detail: "no remote fetch/push refspec touches refs/handoff/ (sync passes its own)" };
}

/** The remote answers; and whether it also holds refs in the other namespace (ref-prefix.ts), a split. */
async function reachability(store: Store, remote: string): Promise<{ check: Check; split: Check | null }> {
  // On a branch-only host the coordination refs live under the remote's branch prefix.
  const prefix = await remotePrefix(store.cwd, remote);
  const start = Date.now();
  const r = await git(["ls-remote", "--end-of-options", remote, `${prefix}*`, ...splitPatterns(prefix)], { cwd: store.cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs: await remoteTimeoutMs(store) });
  const ms = Date.now() - start;
  if (r.code !== 0) {
    const why = r.timedOut ? `no answer within ${ms} ms (handoff.remoteTimeout)` : r.stderr.trim().split("\n")[0];
    return { check: { name: "reachability", status: "fail", detail: `${remote} cannot be reached: ${why}`, fix: "check the URL, network and credentials; meanwhile exclusive operations need --offline" }, split: null };
  }
  const count = r.stdout.split("\n").filter((l) => l.slice(l.indexOf("\t") + 1).startsWith(prefix)).length;
  const check: Check = { name: "reachability", status: "ok", detail: `${remote} answered in ${ms} ms with ${count} coordination ref(s)${prefix === "refs/handoff/" ? "" : ` under ${prefix}`}` };
  const split = splitIn(r.stdout, prefix);
  return { check, split: split ? { name: "namespace", status: "fail", ...splitProblem(remote, split) } : null };
}

async function tentative(store: Store): Promise<Check> {
  const list = await listTentative(store);
  if (!list.length) return { name: "tentative", status: "ok", detail: "no tentative offline operations" };
  const now = store.now().getTime();
  const stale = list.filter((t) => t.event && now - Date.parse(t.event.at) > STALE_TENTATIVE_MS);
  return {
    name: "tentative",
    status: stale.length ? "warn" : "ok",
    detail: `${list.length} tentative offline operation(s)${stale.length ? `, ${stale.length} older than ${formatDuration(STALE_TENTATIVE_MS)}` : ""}`,
    fix: "confirm or refuse them: git handoff sync",
  };
}

/** One live holder per task, claim and status agree, fencing numbers only go up along history. */
async function invariants(store: Store): Promise<Check[]> {
  const problems: string[] = [];
  /** Task refs no verb can read (every command calls them corrupt): only cancel --force removes them. */
  const corrupt: { id: string; why: string }[] = [];
  let tasks = 0;
  for (const { name, oid } of await listRefs(store.storeCwd, TASKS_PREFIX)) {
    tasks++;
    const id = name.slice(TASKS_PREFIX.length);
    let record: Task;
    try {
      // As readTaskAt reads it: a ref pointed at another task's commit is corrupt too.
      record = taskOfRef(name, (await readRecord(store.reader, store.oidBytes, oid, name, "task.json", Task)).record);
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      corrupt.push({ id, why: e.message.split("\n")[0]! });
      continue;
    }
    try {
      if ((record.status === "claimed") !== (record.claim !== null)) problems.push(`${record.id}: status ${record.status} but claim is ${record.claim ? "set" : "empty"}`);
      if (record.claim && record.claim.fence !== record.fence) problems.push(`${record.id}: claim fence ${record.claim.fence} is not the task's fence ${record.fence}`);
      // Walk newest to oldest: grants must have strictly rising fences.
      let at: string | undefined = oid;
      let later = Infinity;
      for (let n = 0; at && n < 10_000; n++) {
        const c = await readCommit(store, at, name);
        const e = eventFromMessage(c.message);
        if (e?.type === "claimed" && e.fence !== undefined) {
          if (e.fence >= later) problems.push(`${record.id}: fence ${e.fence} granted before a later grant with fence ${later}`);
          later = e.fence;
        }
        at = c.parents[0];
      }
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      problems.push(e.message);
    }
  }
  const checks: Check[] = [
    problems.length
      ? { name: "invariants", status: "fail", detail: `${problems.length} problem(s): ${problems.slice(0, 5).join("; ")}`, fix: "inspect with git log <ref>; reclaim or cancel the affected tasks" }
      : { name: "invariants", status: "ok", detail: `${tasks - corrupt.length} live task(s): one holder each, claims match status, fences only go up` },
  ];
  if (corrupt.length) {
    const first = corrupt[0]!.id;
    checks.push({
      name: "corrupt tasks",
      status: "fail",
      detail: `${corrupt.length} task ref(s) no command can read: ${corrupt.slice(0, 5).map((c) => c.why).join("; ")}`,
      fix: `inspect with git log refs/handoff/tasks/${first}, then ${corruptTaskFix(first).detail}; the same for each`,
    });
  }
  return checks;
}
