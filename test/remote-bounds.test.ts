// Remote operations that never hang and never lie: a remote that sleeps in its pre-receive hook
// and an HTTP server that accepts and never answers end in `remote_timeout` within the deadline;
// a remote that refuses pushes is believed at once, in its own words; a push whose report is
// lost is settled by reading the remote back.
import { spawnSync } from "node:child_process";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { start, until } from "./support/handover.ts";
import { storeTasks } from "./support/seed.ts";
import { cloneOf, remoteHook, servedProjectSeeded, serveRoot, startDaemon, startHttp } from "./support/servers.ts";

const stops: (() => void)[] = [];
test.after(() => {
  for (const s of stops) s();
  cleanupTemp();
});

/** The remote and a clone that pushed the task `ship`, written in-process (support/seed.ts): the claims and syncs after are the subject. */
const project = servedProjectSeeded;

const remoteRefs = (bare: string) => gitOut(bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");
const sleepers = (marker: string) => spawnSync("pgrep", ["-f", marker], { encoding: "utf8" }).stdout.trim();

test("a pre-receive hook sleeping past the deadline: remote_timeout within the deadline, its processes killed, nothing changed", async () => {
  const { bare, a } = await project();
  remoteHook(bare, "pre-receive", "sleep 47.5");
  const local = handoffRefs(a);
  const remote = remoteRefs(bare);
  const start = Date.now();
  const r = await cliAsync(["claim", "ship", "--json"], { cwd: a, agent: "alice", env: { HANDOFF_REMOTE_TIMEOUT_MS: "1500" } });
  const took = Date.now() - start;
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "remote_timeout");
  assert.match(r.json.error.message, /origin did not answer within 1\.5s/);
  assert.is(r.json.error.data.remote, "origin");
  assert.ok(took < 1500 + 6000, `took ${took} ms; the hook sleeps 47.5 s`);
  assert.is(handoffRefs(a), local, "nothing local changed");
  assert.is(remoteRefs(bare), remote, "nothing landed");
  assert.is(sleepers("sleep 47.5"), "", "the hook's process group was killed");
});

test("an HTTP server that accepts and never answers: claim and sync end in remote_timeout (git config handoff.remoteTimeout)", async () => {
  const { a } = await project();
  // In this process: the CLI runs as a child (cliAsync), so this event loop stays free.
  const held: Socket[] = [];
  const server = createServer((s) => void held.push(s));
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  stops.push(() => {
    for (const s of held) s.destroy();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  gitOut(a, "remote", "add", "silent", `http://127.0.0.1:${port}/project.git`);
  assert.is(cli(["remote", "silent"], { cwd: a }).code, 0);
  gitOut(a, "config", "handoff.remoteTimeout", "1500ms");
  const local = handoffRefs(a);
  for (const args of [["claim", "ship", "--json"], ["sync", "--json"]]) {
    const start = Date.now();
    const r = await cliAsync(args, { cwd: a, agent: "alice" });
    const took = Date.now() - start;
    assert.is(r.code, 3, `${args[0]}: ${r.stderr}`);
    assert.is(r.json.error.code, "remote_timeout", r.stdout);
    assert.match(r.stderr, /silent did not answer within 1\.5s/);
    assert.ok(took < 1500 + 6000, `${args[0]} took ${took} ms`);
  }
  assert.is(handoffRefs(a), local);

  gitOut(a, "config", "handoff.remoteTimeout", "soon");
  const bad = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(bad.code, 2);
  assert.is(bad.json.error.code, "invalid_input");
  assert.match(bad.stderr, /handoff\.remoteTimeout/);
  const badEnv = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice", env: { HANDOFF_REMOTE_TIMEOUT_MS: "-3" } });
  assert.is(badEnv.json.error.code, "invalid_input");
  assert.is(handoffRefs(a), local);
});

test("a remote that refuses pushes: one attempt, remote_rejected in the remote's own words; sync says the same", async () => {
  const { bare, a } = await project();
  remoteHook(bare, "pre-receive", `echo x >> "$GIT_DIR/attempts"; echo "pushes to refs/handoff are disabled" >&2; exit 1`);
  const local = handoffRefs(a);
  const r = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "remote_rejected");
  assert.is(r.json.error.recoverable, false);
  assert.match(r.stderr, /pushes to refs\/handoff are disabled/);
  assert.match(r.stderr, /pre-receive hook declined/);
  assert.not.match(r.stderr, /race|busy/);
  assert.is(readFileSync(`${bare}/attempts`, "utf8"), "x\n", "exactly one push");
  assert.is(handoffRefs(a), local);

  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "more", objective: "more" }]);
  const s = cli(["sync", "--json"], { cwd: a, agent: "lead" });
  assert.is(s.code, 3);
  assert.is(s.json.error.code, "remote_rejected");
  assert.match(s.json.error.message, /pushes to refs\/handoff are disabled/);
});

test("a push whose report is lost after the remote committed it: read back, the claim landed and holds", async () => {
  const { bare, a } = await project();
  // The remote commits the refs, then its receive-pack dies before it can report.
  remoteHook(bare, "reference-transaction", `if [ "$1" = committed ] && [ -f "$GIT_DIR/kill-next" ]; then rm -f "$GIT_DIR/kill-next"; kill -9 $PPID; fi`);
  writeFileSync(`${bare}/kill-next`, "");
  const r = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 0, r.stderr);
  assert.not.ok(existsSync(`${bare}/kill-next`), "the remote was killed mid-push");
  assert.match(r.stderr, /report .* was lost .* landed/);
  assert.is(r.json.claim.agent, "alice");
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "alice");
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/ship"), gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), "local brought up to date");
  assert.is(gitOut(a, "rev-parse", "refs/handoff-remotes/origin/tasks/ship"), gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"));
  // The grant holds: the same agent sees it, another is refused.
  const again = cli(["claim", "ship", "--json"], { cwd: cloneOf(bare), agent: "bob" });
  assert.is(again.json.error.code, "held_by_other");
});

test("a lost report and a remote that cannot be read back: outcome_unknown, never unreachable or free", async () => {
  const { bare, a } = await project();
  remoteHook(bare, "reference-transaction", `if [ "$1" = committed ] && [ -f "$GIT_DIR/kill-next" ]; then rm -f "$GIT_DIR/kill-next"; d=$(cd "$GIT_DIR" && pwd); mv "$d" "$d.away"; kill -9 $PPID; fi`);
  writeFileSync(`${bare}/kill-next`, "");
  const r = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "outcome_unknown");
  assert.is(r.json.error.recoverable, true);
  assert.is(r.json.error.suggestions[0].detail, "find out what holds: git handoff sync, then git handoff task show ship");
  assert.match(r.stderr, /a push to origin for task ship may or may not have landed/);
  assert.not.match(r.stdout + r.stderr, /--offline|free|unreachable/);
  // A handover's task is known by nothing but its id: the refusal names the one it created.
  writeFileSync(`${bare}.away/kill-next`, "");
  renameSync(`${bare}.away`, bare);
  const w = cli(["wait", "--objective", "look into it", "--timeout", "20s", "--json"], { cwd: a, agent: "alice" });
  assert.is(w.json.error.code, "outcome_unknown", w.stderr);
  const created = gitOut(`${bare}.away`, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/handoff/tasks/").split("\n").filter((t) => t !== "ship");
  assert.is(created.length, 1, created.join(","));
  assert.equal(w.json.error.data.tasks, created);
  assert.match(w.json.error.suggestions[0].detail, new RegExp(`git handoff task show ${created[0]}$`));
});

test("through git daemon and smart HTTP: a refusing remote is remote_rejected, a lost report is read back as landed", async () => {
  const served = serveRoot();
  served.bare("probe");
  const daemon = await startDaemon(served.root, "probe");
  const http = await startHttp(served.root);
  stops.push(() => void daemon.stop(), () => void http.stop());
  for (const [kind, url] of [["daemon", daemon.url], ["http", http.url]] as const) {
    const bare = served.bare(`over-${kind}`);
    gitOut(tempRepo(), "push", "-q", bare, "main");
    const a = cloneOf(url(`over-${kind}`));
    await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id: "ship", objective: "ship it" }]);

    remoteHook(bare, "pre-receive", `echo "refs/handoff is read-only here" >&2; exit 1`);
    const refused = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
    assert.is(refused.json?.error?.code, "remote_rejected", `${kind}: ${refused.stdout} ${refused.stderr}`);
    assert.match(refused.stderr, /refs\/handoff is read-only here/);

    rmSync(`${bare}/hooks/pre-receive`);
    remoteHook(bare, "reference-transaction", `if [ "$1" = committed ] && [ -f "$GIT_DIR/kill-next" ]; then rm -f "$GIT_DIR/kill-next"; kill -9 $PPID; fi`);
    writeFileSync(`${bare}/kill-next`, "");
    const landed = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
    assert.is(landed.code, 0, `${kind}: ${landed.stderr}`);
    assert.not.ok(existsSync(`${bare}/kill-next`), `${kind}: the remote was killed mid-push`);
    assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "alice");
    assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/ship"), gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"));
  }
});

test("a second Ctrl-C while wait's cancel is being pushed: exit 130 at once, and git's packet trace of that push is not left in the temp folder", async () => {
  const served = serveRoot();
  served.bare("probe");
  const daemon = await startDaemon(served.root, "probe");
  stops.push(() => void daemon.stop());
  const bare = served.bare("trace");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(daemon.url("trace")); // git://: pushed by `git push`, traced
  const tmp = tempDir();
  const traces = () => readdirSync(tmp).filter((n) => n.startsWith("git-handoff-push-"));
  const waited = start(["wait", "--objective", "x", "--to", "nobody@nowhere"], { cwd: a, agent: "alice", env: { TMPDIR: tmp } });
  await until(() => /created \S+ and pushed it/.test(waited.stderr()), "the task to be pushed");
  // From now on the remote holds every push in its hook (the hook's pid is kept, to end it after).
  remoteHook(bare, "pre-receive", `echo $$ > "$GIT_DIR/hook.pid"; exec sleep 31.5`);
  stops.push(() => {
    try {
      process.kill(Number(readFileSync(`${bare}/hook.pid`, "utf8")), "SIGKILL");
    } catch {
      /* never ran, or gone */
    }
  });
  waited.child.kill("SIGINT");
  await until(() => traces().length > 0 && existsSync(`${bare}/hook.pid`), "the cancel's push to be under way");
  waited.child.kill("SIGINT");
  assert.is(await waited.exited, 130, waited.stderr());
  assert.equal(traces(), [], "no packet trace left behind");
});

test.run();
