// Benchmark: the remote path and the user's own git at 1,000 and 5,000 live tasks, as ratios
// measured in one run (interleaved, medians).
//   npm run build && node --import tsx test/bench/remote-scale.bench.ts [sizes=1000,5000] [rounds=7]
// - the user's `git push` of a branch and `git fetch` with nothing new, against the same with no
//   handoff refs anywhere: a clone synced the old way (two loose refs per task), the same clone
//   after sync packed its refs (`git pack-refs` and a commit-graph layer of the handoff commits,
//   what sync does once refs pile up), and a dedicated coordination
//   remote (the code remote carries no handoff refs; the clone's own handoff refs are packed), and
//   the same with those refs in a separate store (`git handoff store --separate`).
// - a claim through the remote (by path, smart HTTP, and smart HTTP over TLS with Basic
//   authentication answered by git's `store` credential helper) against the floor: `git fetch` of one ref
//   plus `git push` of one ref; with --over-capacity (the remote path alone) and without (the
//   capacity check reads the caller's claims).
// - `sync` with nothing new against `node -e 0` + `git ls-remote refs/handoff/*`.
// - the same claim and sync with the push and the listing left to git (HANDOFF_PATH_REMOTE=git
//   by path, HANDOFF_HTTP_REMOTE=git over HTTP), interleaved: what pushing to and listing a remote
//   in process (src/git/path-remote.ts, src/git/http-remote.ts) saves.
// - the same two from a long-running process (an MCP server over stdio, as agents run it): a
//   claim_task through the remote against the same floor, and a sync tool call with nothing new
//   against `git ls-remote` alone (no Node start on either side). BENCH_LAYOUT=separate runs these
//   from a clone whose coordination refs are in a separate store.
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { CLI, cleanEnv, cleanupTemp, gitOut, tempDir, tempRepo } from "../support/repo.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cloneOf, serveRoot, startHttp, TLS_CERT } from "../support/servers.ts";
import { overStdio } from "../support/mcp.ts";
import { median } from "./stats.ts";

const SIZES = (process.argv[2] ?? "1000,5000").split(",").map(Number);
const ROUNDS = Number(process.argv[3] ?? 7);

function time(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(env), encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return ms;
}
const git = (cwd: string, ...args: string[]) => time("git", args, cwd);
const handoff = (cwd: string, agent: string, ...args: string[]) => time(process.execPath, [CLI, ...args], cwd, { HANDOFF_AGENT: agent });
/** The same through git push and git ls-remote, for a remote on this disk or over HTTP that is otherwise written in process (git/path-remote.ts, git/http-remote.ts). */
const handoffViaGit = (cwd: string, agent: string, ...args: string[]) => time(process.execPath, [CLI, ...args], cwd, { HANDOFF_AGENT: agent, HANDOFF_PATH_REMOTE: "git", HANDOFF_HTTP_REMOTE: "git" });
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** A bare remote holding `n` tasks, created in bulk in a scratch clone and pushed with plain git. */
async function remoteWith(served: ReturnType<typeof serveRoot>, name: string, n: number): Promise<string> {
  const bare = served.bare(name);
  const seed = tempRepo();
  gitOut(seed, "push", "-q", bare, "main");
  if (n) {
    const store = await openSyncedStore({ cwd: seed, agent: "seed", warm: true });
    for (let i = 0; i < n; i++) await addTask(store, { id: `live-${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
    store.close();
    gitOut(seed, "push", "-q", bare, "refs/handoff/*:refs/handoff/*");
  }
  return bare;
}

/** A clone of `url` holding the handoff refs of `coord` as a synced clone had them before packing: loose. */
function looseClone(url: string, coord: string): string {
  const c = cloneOf(url);
  gitOut(c, "fetch", "-q", coord, "+refs/handoff/*:refs/handoff/*", "+refs/handoff/*:refs/handoff-remotes/origin/*");
  return c;
}

/** The same once sync packed its refs: `git pack-refs --all` and a commit-graph layer of the handoff commits (pack-refs.ts). */
function packedCopy(url: string, coord: string): string {
  const c = looseClone(url, coord);
  gitOut(c, "pack-refs", "--all");
  const tips = gitOut(c, "for-each-ref", "--format=%(objectname)", "refs/handoff/", "refs/handoff-remotes/");
  const r = spawnSync("git", ["commit-graph", "write", "--split", "--stdin-commits", "--no-progress"], { cwd: c, input: `${tips}\n`, env: cleanEnv() });
  if (r.status !== 0) throw new Error(`commit-graph write failed: ${r.stderr}`);
  return c;
}

async function userGit(served: ReturnType<typeof serveRoot>, n: number, plainUrl: string, codeUrl: string, label: string): Promise<void> {
  const plain = cloneOf(plainUrl);
  const loose = looseClone(codeUrl, codeUrl);
  const packed = packedCopy(codeUrl, codeUrl);
  // Dedicated coordination remote: the code remote is plain, the clone's handoff refs come from elsewhere.
  const dedicated = packedCopy(plainUrl, codeUrl);
  // The same with the coordination refs in a separate store (git handoff store --separate).
  const separate = packedCopy(plainUrl, codeUrl);
  time(process.execPath, [CLI, "store", "--separate"], separate);
  // A separate store alone: the code remote still advertises every handoff ref to every push and fetch.
  const separateOnly = packedCopy(codeUrl, codeUrl);
  time(process.execPath, [CLI, "store", "--separate"], separateOnly);
  const clones = { plain, loose, packed, dedicated, separate, separateOnly };
  const push: Record<string, number[]> = { plain: [], loose: [], packed: [], dedicated: [], separate: [], separateOnly: [] };
  const fetch: Record<string, number[]> = { plain: [], loose: [], packed: [], dedicated: [], separate: [], separateOnly: [] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const [k, c] of Object.entries(clones)) {
      gitOut(c, "commit", "-q", "--allow-empty", "-m", `work ${i}`);
      push[k]!.push(git(c, "push", "-q", "origin", `HEAD:refs/heads/${k}-${n}-${label.replace(/\W+/g, "-")}-${i}`));
      fetch[k]!.push(git(c, "fetch", "-q", "origin"));
    }
  }
  const m = (x: number[]) => median(x);
  console.log(`\nthe user's own git, ${n} live tasks, ${label} (median of ${ROUNDS}; ratio to the same with no handoff refs)`);
  console.log(`  git push of a branch: synced clone ${ratio(m(push.loose!), m(push.plain!))}, after sync packed ${ratio(m(push.packed!), m(push.plain!))}, dedicated coordination remote ${ratio(m(push.dedicated!), m(push.plain!))}, and a separate store ${ratio(m(push.separate!), m(push.plain!))}; a separate store alone ${ratio(m(push.separateOnly!), m(push.plain!))}   (target <= 1.2x)`);
  console.log(`  git fetch, nothing new: synced clone ${ratio(m(fetch.loose!), m(fetch.plain!))}, after sync packed ${ratio(m(fetch.packed!), m(fetch.plain!))}, dedicated coordination remote ${ratio(m(fetch.dedicated!), m(fetch.plain!))}, and a separate store ${ratio(m(fetch.separate!), m(fetch.plain!))}; a separate store alone ${ratio(m(fetch.separateOnly!), m(fetch.plain!))}   (target <= 1.2x)`);
  void served;
}

/** The https label's credentials, answered by git's store helper in its clone. */
const CREDENTIAL = "bench:bench-password";

/**
 * Each label claims its own tasks: label k's CLI claims from 5k * ROUNDS, its server's from
 * 5k * ROUNDS + 2 * ROUNDS, its claims through git from 5k * ROUNDS + 3 * ROUNDS.
 */
async function remotePath(n: number, url: string, label: string, k: number, bare?: string): Promise<void> {
  const offset = 5 * k * ROUNDS;
  // Over https: a clone made by path, then pointed at the URL, its credentials in a store helper's file.
  const clone = bare ? cloneOf(bare) : cloneOf(url);
  if (bare) {
    gitOut(clone, "config", "remote.origin.url", url);
    const file = join(tempDir("handoff-bench-creds-"), "credentials");
    writeFileSync(file, `https://${CREDENTIAL}@${new URL(url).host}\n`);
    gitOut(clone, "config", "credential.helper", `store --file=${file}`);
  }
  handoff(clone, "sync", "sync"); // mirrors the remote's tasks (and packs them)
  // BENCH_LAYOUT=separate: the clone's coordination refs in a separate store (git handoff store --separate).
  if (process.env.BENCH_LAYOUT === "separate") time(process.execPath, [CLI, "store", "--separate"], clone);
  const server = await overStdio(clone, { agent: `warm-${label.replace(/\W+/g, "-")}`, checkOutput: false });
  const warmClaim: number[] = [];
  const warmSync: number[] = [];
  const lsRemote: number[] = [];
  const timedCall = async (name: string, args: Record<string, unknown>): Promise<number> => {
    const t0 = performance.now();
    const r = await server.call(name, args);
    const ms = performance.now() - t0;
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
    return ms;
  };
  // Its first call loads the tools and reads the repository: not what a running server pays.
  await timedCall("sync", {});
  const head = gitOut(clone, "rev-parse", "HEAD");
  const tree = gitOut(clone, "rev-parse", "HEAD^{tree}");
  const floor: number[] = [];
  const claimOver: number[] = [];
  const claim: number[] = [];
  const sync: number[] = [];
  const syncFloor: number[] = [];
  const node: number[] = [];
  // The same claim and sync with the push and the listing left to git, interleaved.
  const byPath = label === "by path";
  if (n < 15 * ROUNDS) throw new Error(`${n} live tasks are too few for ${ROUNDS} rounds of three labels (at least ${15 * ROUNDS})`);
  const claimGit: number[] = [];
  const syncGit: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const commit = gitOut(clone, "commit-tree", tree, "-p", head, "-m", `bench ${label} ${i}`);
    floor.push(git(clone, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "origin", `+refs/handoff/tasks/live-${i}:refs/bench-fetch/live-${i}`) + git(clone, "push", "-q", "origin", `${commit}:refs/bench/${label.replace(/\W+/g, "-")}-${i}`));
    claimOver.push(handoff(clone, `over-${label.replace(/\W+/g, "-")}-${i}`, "claim", `live-${offset + 2 * i}`, "--over-capacity"));
    claim.push(handoff(clone, `plain-${label.replace(/\W+/g, "-")}-${i}`, "claim", `live-${offset + 2 * i + 1}`));
    claimGit.push(handoffViaGit(clone, `git-${i}`, "claim", `live-${offset + 3 * ROUNDS + i}`, "--over-capacity"));
    handoff(clone, "sync", "sync");
    sync.push(handoff(clone, "sync", "sync"));
    syncGit.push(handoffViaGit(clone, "sync", "sync"));
    const z = time(process.execPath, ["-e", "0"], clone);
    node.push(z);
    const ls = git(clone, "ls-remote", "origin", "refs/handoff/*");
    syncFloor.push(z + ls);
    lsRemote.push(ls);
    warmClaim.push(await timedCall("claim_task", { id: `live-${offset + 2 * ROUNDS + i}`, over_capacity: true }));
    await timedCall("sync", {});
    warmSync.push(await timedCall("sync", {}));
  }
  await server.close();
  const f = median(floor);
  console.log(`\nremote path, ${n} live tasks, ${label}${process.env.BENCH_LAYOUT === "separate" ? ", separate store" : ""} (median of ${ROUNDS})`);
  console.log(`  claim --over-capacity / (git fetch 1 ref + git push 1 ref)   ${ratio(median(claimOver), f)}   (target <= 1.3x)`);
  console.log(`  claim (capacity checked) / the same floor                    ${ratio(median(claim), f)}`);
  console.log(`  claim (capacity checked) / (the floor + node -e 0)           ${ratio(median(claim), f + median(node))}   (the same at every size)`);
  console.log(`  sync, nothing new / (node -e 0 + git ls-remote)              ${ratio(median(sync), median(syncFloor))}   (target <= 1.3x)`);
  console.log(`  the same two with git push and git ls-remote (HANDOFF_${byPath ? "PATH" : "HTTP"}_REMOTE=git): claim --over-capacity ${ratio(median(claimGit), f)}, sync ${ratio(median(syncGit), median(syncFloor))}; in process / through git: ${ratio(median(claimOver), median(claimGit))}, ${ratio(median(sync), median(syncGit))}`);
  console.log(`  a running MCP server's claim_task / the same floor           ${ratio(median(warmClaim), f)}   (target <= 1.3x)`);
  console.log(`  a running MCP server's sync, nothing new / git ls-remote     ${ratio(median(warmSync), median(lsRemote))}   (target <= 1.3x)`);
}

const served = serveRoot();
const http = await startHttp(served.root);
const https = await startHttp(served.root, undefined, { tls: true, basicAuth: CREDENTIAL });
// Every git and git-handoff process of the bench trusts the test authority (the other labels do not use TLS).
process.env.GIT_SSL_CAINFO = TLS_CERT;
try {
  const plain = await remoteWith(served, "plain", 0);
  for (const n of SIZES) {
    const name = `code${n}`;
    const bare = await remoteWith(served, name, n);
    // BENCH_REMOTE_ONLY=1: the remote path alone (the user's own git takes most of the run).
    if (!process.env.BENCH_REMOTE_ONLY) {
      await userGit(served, n, plain, bare, "by path");
      await userGit(served, n, http.url("plain"), http.url(name), "smart HTTP");
    }
    await remotePath(n, bare, "by path", 0);
    await remotePath(n, http.url(name), "smart HTTP", 1);
    await remotePath(n, https.url(name), "smart HTTP over TLS with credentials", 2, bare);
  }
} finally {
  await http.stop();
  await https.stop();
  cleanupTemp();
}
