// Fetches from a sync remote by path, file:// and git:// made in process (src/git/stream-remote.ts):
// protocol v2 to the remote's upload-pack over a pipe of this process's or a connection to a real
// `git daemon`, never `git fetch`; outside the plain case, git's. A git:// server that answers
// garbage, closes mid-pack, sends without end or never answers is refused or out of time, never
// hung on, never handed to git. What passes a bound: test/fetch-bounds.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { cleanupTemp, cli, cliAsync, gitOut, sh, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot, startDaemon, type GitServer } from "./support/servers.ts";
import { fetchOverStream, listOverDaemon } from "../src/git/stream-remote.ts";
import { MAX_ANSWER } from "../src/git/upload-pack-v2.ts";
import { pkt } from "../src/git/pkt-line.ts";
import { openStore } from "../src/store/store.ts";

const servers: GitServer[] = [];
const plain: Server[] = [];
const held: Socket[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of held) s.destroy();
  for (const s of plain) s.close();
  cleanupTemp();
});

/** A served folder with a bare `project` (main pushed), a git daemon on it, and the URL of each kind. */
async function served() {
  const root = serveRoot();
  const bare = root.bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const daemon = await startDaemon(root.root, "project");
  servers.push(daemon);
  return { root, bare, daemon };
}

/** The git commands a run started, from its GIT_TRACE file ("" when it started none). */
function gitRuns(trace: string): string[] {
  if (!existsSync(trace)) return [];
  return [...readFileSync(trace, "utf8").matchAll(/trace: built-in: (git [^\n]*)/g)].map((m) => m[1]!);
}

test("a sync by path, by file:// and over git:// fetches in process: no git fetch, by path the few new objects read from the folder's files, over git:// no git at all", async () => {
  const { bare, daemon } = await served();
  const lead = cloneOf(bare);
  for (const [kind, url] of [["path", bare], ["file", `file://${bare}`], ["daemon", daemon.url("project")]] as const) {
    const b = cloneOf(url);
    assert.is(cli(["task", "add", `ship ${kind}`, "--id", `ship-${kind}`, "--push"], { cwd: lead, agent: "lead" }).code, 0);
    const trace = join(tempDir(), "trace");
    const s = cli(["sync", "--json"], { cwd: b, agent: "bob", env: { GIT_TRACE: trace } });
    assert.is(s.code, 0, s.stderr);
    assert.ok(s.json.fetched.includes(`refs/handoff/tasks/ship-${kind}`), s.stdout);
    assert.is(gitOut(b, "rev-parse", `refs/handoff/tasks/ship-${kind}`), gitOut(bare, "rev-parse", `refs/handoff/tasks/ship-${kind}`));
    assert.is(gitOut(b, "fsck", "--no-dangling", "--no-progress").trim(), "");
    const runs = gitRuns(trace);
    assert.not.ok(runs.some((r) => /^git (fetch|ls-remote|index-pack|unpack-objects|rev-list)/.test(r)), runs.join("\n"));
    if (kind === "daemon") assert.equal(runs.filter((r) => !r.startsWith("git cat-file") && !r.startsWith("git update-ref")), [], "over git:// the daemon's upload-pack is the only one");
    // The task's three new objects are loose in the folder (a push leaves them so): read there (folder-fetch.ts).
    else assert.is(runs.filter((r) => r.startsWith("git upload-pack")).length, 0, runs.join("\n"));
    const doctor = cli(["doctor"], { cwd: b });
    assert.match(doctor.stdout, kind === "daemon" ? /remote-over-git +origin is git:\/\/127\.0\.0\.1:\d+\/project\.git: listings and fetches are one connection of this process's/ : /fetches read the few new objects from its files where they are loose, else one git upload-pack of this process.s/);
  }
});

test("outside the plain case the fetch is git's, and doctor says why", async () => {
  const { bare, daemon } = await served();
  const lead = cloneOf(bare);
  assert.is(cli(["task", "add", "ship", "--id", "ship", "--push"], { cwd: lead, agent: "lead" }).code, 0);
  const cases: [string, string, Record<string, string>, RegExp][] = [
    [bare, "protocol.file.allow", {}, /fetches go through git fetch because protocol\.file\.allow \(git's protocol settings\)/],
    [daemon.url("project"), "core.gitProxy", {}, /pushes, listings and fetches go through git because core\.gitproxy \(a proxy for git:\/\/\)/],
    [daemon.url("project"), "", { HANDOFF_DAEMON_REMOTE: "git" }, /go through git because HANDOFF_DAEMON_REMOTE=git/],
  ];
  for (const [url, setting, env, why] of cases) {
    const b = cloneOf(url);
    // `none for 127.0.0.1`: git connects itself, so its fetch still works.
    if (setting) gitOut(b, "config", setting, setting === "core.gitProxy" ? "none for 127.0.0.1" : "always");
    const trace = join(tempDir(), "trace");
    const s = cli(["sync"], { cwd: b, agent: "bob", env: { ...env, GIT_TRACE: trace } });
    assert.is(s.code, 0, s.stderr);
    assert.is(gitOut(b, "rev-parse", "refs/handoff/tasks/ship"), gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"));
    assert.ok(gitRuns(trace).some((r) => r.startsWith("git fetch")), `${url} ${setting}: ${gitRuns(trace).join("\n")}`);
    assert.match(cli(["doctor"], { cwd: b, env }).stdout, why);
  }
});


/** A git:// server of the test's own on 127.0.0.1: `answer` gets each connection. */
async function fakeDaemon(answer: (s: Socket) => void): Promise<number> {
  const server = createServer((s) => {
    held.push(s);
    s.on("error", () => {});
    answer(s);
  });
  plain.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as AddressInfo).port;
}

const ADVERTISEMENT = Buffer.concat([pkt("version 2\n"), pkt("agent=fake\n"), pkt("ls-refs\n"), pkt("fetch\n"), pkt("object-format=sha1\n"), Buffer.from("0000")]);

test("a git:// server that answers garbage, closes mid-pack, sends without end or never answers: refused or out of time", async () => {
  const { bare } = await served();
  const a = cloneOf(bare);
  const store = await openStore({ cwd: a, agent: "tester" });
  try {
    const head = gitOut(a, "rev-parse", "main");
    const point = async (answer: (s: Socket) => void) => {
      const url = `git://127.0.0.1:${await fakeDaemon(answer)}/project.git`;
      gitOut(a, "config", "remote.origin.url", url);
      return url;
    };
    const fetch = (ms = 5000) => fetchOverStream(store.remoteSource, "origin", [head], [], ms);

    const garbage = await point((s) => s.once("data", () => s.end("zzzz not pkt-lines \x00\x01")));
    // Refused, never git's: git's fetch would write whatever the same server sent it.
    assert.equal(await fetch(), { ok: false, message: `${garbage} answered the fetch with what is not pkt-lines: the fetch is refused, nothing of it written`, timedOut: false, bound: true });
    assert.is(await listOverDaemon(store.remoteSource, "origin", ["refs/handoff/"], 5000), null, "a listing of garbage too");

    // The advertisement, the packfile section's start and part of a real pack, then the connection closes.
    const pack = sh("sh", ["-c", `echo ${head} | git pack-objects --stdout --revs | od -An -v -tx1 | tr -d ' \\n'`], bare);
    const cut = Buffer.from(pack.slice(0, pack.length / 2), "hex");
    const cutting = await point((s) => s.once("data", () => s.end(Buffer.concat([ADVERTISEMENT, pkt("packfile\n"), Buffer.concat([Buffer.from(((cut.length + 5).toString(16)).padStart(4, "0")), Buffer.from([1]), cut])]))));
    assert.equal(await fetch(), { ok: false, message: `${cutting} answered the fetch with a packfile section cut off before its end: the fetch is refused, nothing of it written`, timedOut: false, bound: true }, "closed mid-pack");

    // Pkt-lines without end: cut off at MAX_ANSWER, refused naming the bound.
    const flooding = await point((s) =>
      s.once("data", () => {
        s.write(Buffer.concat([ADVERTISEMENT, pkt("packfile\n")]));
        const line = Buffer.concat([Buffer.from("fff0"), Buffer.from([1]), Buffer.alloc(0xfff0 - 5)]);
        const more = () => {
          while (!s.destroyed && s.write(line));
          if (!s.destroyed) s.once("drain", more);
        };
        more();
      }),
    );
    const flood = await fetch(20_000);
    assert.equal(flood, { ok: false, message: `${flooding} sent an answer of more than ${MAX_ANSWER} bytes, past the bound on one answer: the fetch is refused, nothing of it written`, timedOut: false, bound: true });

    // Accepts and never answers: out of time at the deadline, listing and fetch alike.
    await point(() => {});
    const t0 = Date.now();
    const silent = await fetch(600);
    assert.equal("ok" in silent && !silent.ok && silent.timedOut, true);
    const quiet = await listOverDaemon(store.remoteSource, "origin", ["refs/handoff/"], 600);
    assert.equal(quiet && !quiet.ok && quiet.timedOut, true);
    assert.ok(Date.now() - t0 < 5000, `${Date.now() - t0} ms`);
  } finally {
    store.close();
  }
  // The same silent server through the command: remote_timeout within the deadline, nothing changed.
  gitOut(a, "config", "handoff.remoteTimeout", "1500ms");
  const before = sh("git", ["for-each-ref", "refs/handoff/", "refs/handoff-remotes/"], a);
  const s = await cliAsync(["sync", "--json"], { cwd: a, agent: "alice" });
  assert.is(s.code, 3, s.stderr);
  assert.is(s.json.error.code, "remote_timeout");
  assert.match(s.stderr, /did not answer the listing within/);
  assert.is(sh("git", ["for-each-ref", "refs/handoff/", "refs/handoff-remotes/"], a), before);
});


test.run();
