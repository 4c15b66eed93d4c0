// A sync remote over smart HTTP, pushed to and listed in process (src/git/http-remote.ts): a claim
// is one POST to git-receive-pack (after one capability check per URL and hour), a listing one
// ls-refs request; what the remote answers is read as git push reads it (landed, lost the
// compare-and-swap, refused by a hook in its own words, unknown), and everything outside the plain
// case goes to git as before. Real `git http-backend` behind the test's HTTP server.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { join } from "node:path";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, remoteHook, serveRoot, startHttp, type GitServer } from "./support/servers.ts";
import { fetchOverHttp, httpRemoteStatus, listOverHttp, pushOverHttp } from "../src/git/http-remote.ts";
import { packOf } from "../src/git/pack-stream.ts";
import { openStore } from "../src/store/store.ts";

const servers: GitServer[] = [];
const plain: Server[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of plain) s.closeAllConnections(), s.close();
  cleanupTemp();
});

/** A served bare remote with main, a request log, and two clones of it over HTTP. */
async function served(name: string) {
  const root = serveRoot();
  const log = join(tempDir("handoff-http-log-"), "requests.log");
  writeFileSync(log, "");
  const http = await startHttp(root.root, log);
  servers.push(http);
  const bare = root.bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const requests = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { bare, http, url: http.url(name), a: cloneOf(http.url(name)), b: cloneOf(http.url(name)), requests, log };
}

test("a claim over smart HTTP is one POST to git-receive-pack; the other clone is refused, naming the holder", async () => {
  const { bare, a, b, requests, log } = await served("one");
  assert.is(cli(["task", "add", "ship", "--id", "ship", "--scope", "src/**", "--push"], { cwd: a, agent: "lead" }).code, 0);
  // The first push to the URL read its capabilities once (kept in .git/handoff/http-remotes.json).
  assert.ok(requests().includes("GET /one.git/info/refs?service=git-receive-pack (git-handoff)"), requests().join("\n"));
  const memo = JSON.parse(readFileSync(join(a, ".git/handoff/http-remotes.json"), "utf8"));
  assert.equal(Object.values(memo.remotes as Record<string, { push: { ok: boolean } }>)[0]!.push.ok, true);
  writeFileSync(log, "");
  const won = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(won.code, 0, won.stderr);
  // The task and its file lease in one atomic request: no advertisement, no git push.
  assert.equal(requests().filter((r) => r.includes("receive-pack")), ["POST /one.git/git-receive-pack (git-handoff)"]);
  const onRemote = JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json"));
  assert.is(onRemote.claim.agent, "alice");
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), gitOut(a, "rev-parse", "refs/handoff/tasks/ship"));
  assert.is(gitOut(bare, "fsck", "--no-dangling", "--no-progress").trim(), "");
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice");
  // b learnt it with a listing and a fetch of its own: two requests, no git process.
  assert.is(cli(["release", "ship", "--push"], { cwd: a, agent: "alice" }).code, 0);
  writeFileSync(log, "");
  const synced = cli(["sync", "--json"], { cwd: b, agent: "bob" });
  assert.is(synced.code, 0, synced.stderr);
  assert.equal(requests().filter((r) => r.includes("upload-pack")), ["POST /one.git/git-upload-pack (git-handoff ls-refs)", "POST /one.git/git-upload-pack (git-handoff fetch)"]);
  assert.is(gitOut(b, "rev-parse", "refs/handoff/tasks/ship"), gitOut(a, "rev-parse", "refs/handoff/tasks/ship"));
  assert.is(gitOut(b, "fsck", "--no-dangling", "--no-progress").trim(), "");
  // The same through git (HANDOFF_HTTP_REMOTE=git) reads the advertisement first, as git push does.
  writeFileSync(log, "");
  const viaGit = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob", env: { HANDOFF_HTTP_REMOTE: "git" } });
  assert.is(viaGit.code, 0, viaGit.stderr);
  assert.ok(requests().includes("GET /one.git/info/refs?service=git-receive-pack"), requests().join("\n"));
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "bob");
});

test("a lost compare-and-swap is stale with the remote unchanged; a hook's refusal comes back in its words", async () => {
  const { bare, url, a } = await served("cas");
  assert.is(cli(["task", "add", "ship", "--id", "ship", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const store = await openStore({ cwd: a, agent: "tester" });
  try {
    const tip = gitOut(a, "rev-parse", "refs/handoff/tasks/ship");
    const parent = gitOut(a, "rev-parse", "main");
    // A new commit on top of the task's tip, pushed with a wrong expected value.
    const next = gitOut(a, "commit-tree", `${tip}^{tree}`, "-p", tip, "-m", "next");
    const stale = await pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/tasks/ship", new: next, expected: parent }], 10_000);
    assert.is(stale?.kind, "report");
    const refused = stale!.kind === "report" ? stale!.refs.get("refs/handoff/tasks/ship") : null;
    assert.is(refused?.ok, false);
    assert.match((refused as { reason: string }).reason, /atomic|lock|expected/);
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), tip);
    // The right expected value lands.
    const landed = await pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/tasks/ship", new: next, expected: tip }], 10_000);
    assert.is(landed?.kind === "report" && landed.refs.get("refs/handoff/tasks/ship")?.ok, true);
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), next);
    // The listing is git ls-remote's, byte for byte.
    const listed = await listOverHttp(store.remoteSource, "origin", ["refs/handoff/"], 10_000);
    assert.is(listed?.ok && listed.text, gitOut(a, "ls-remote", url, "refs/handoff/*") + "\n");
    const one = await listOverHttp(store.remoteSource, "origin", ["refs/handoff/tasks/nope"], 10_000);
    assert.equal(one, { ok: true, text: "" });
  } finally {
    store.close();
  }
  remoteHook(bare, "pre-receive", 'echo "handoff refs are frozen this week" >&2; exit 1');
  const before = handoffRefs(a);
  const refused = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(refused.code, 3, refused.stderr);
  assert.is(refused.json.error.code, "remote_rejected");
  assert.match(refused.json.error.message, /frozen this week/);
  assert.is(handoffRefs(a), before);
});

test("a pack of large and small objects is one git index-pack takes whole; a chain of commits with a large file lands", async () => {
  const { bare, a } = await served("big");
  assert.is(cli(["task", "add", "ship", "--id", "ship", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const store = await openStore({ cwd: a, agent: "tester" });
  try {
    // 200 KB that does not compress, 20 KB that does, and small ones: both framings, both hashes.
    const big = randomBytes(200 * 1024);
    const mid = Buffer.from("x".repeat(20 * 1024));
    const objects = [
      { type: "blob" as const, data: big },
      { type: "blob" as const, data: mid },
      { type: "blob" as const, data: Buffer.from("small\n") },
    ];
    const pack = packOf(objects);
    const dir = tempDir("handoff-pack-");
    gitOut(dir, "init", "-q", "--bare", ".");
    const indexed = spawnSync("git", ["index-pack", "--stdin", "--strict"], { cwd: dir, input: pack, encoding: "latin1" });
    assert.is(indexed.status, 0, indexed.stderr);
    for (const o of objects) {
      const id = spawnSync("git", ["hash-object", "--stdin"], { cwd: dir, input: o.data, encoding: "utf8" }).stdout.trim();
      assert.is(spawnSync("git", ["cat-file", "-s", id], { cwd: dir, encoding: "utf8" }).stdout.trim(), String(o.data.length));
    }
    // Three commits on top of the task's tip, the middle one adding the large file: all sent, whole.
    const tip = gitOut(a, "rev-parse", "refs/handoff/tasks/ship");
    const file = join(tempDir("handoff-big-"), "big.bin");
    writeFileSync(file, big);
    const blob = gitOut(a, "hash-object", "-w", file);
    const tree = spawnSync("git", ["mktree"], { cwd: a, input: `${gitOut(a, "ls-tree", `${tip}^{tree}`)}\n100644 blob ${blob}\tbig.bin\n`, encoding: "utf8" }).stdout.trim();
    let commit = gitOut(a, "commit-tree", `${tip}^{tree}`, "-p", tip, "-m", "one");
    commit = gitOut(a, "commit-tree", tree, "-p", commit, "-m", "two");
    commit = gitOut(a, "commit-tree", tree, "-p", commit, "-m", "three");
    const r = await pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/tasks/ship", new: commit, expected: tip }], 20_000);
    assert.is(r?.kind === "report" && r.refs.get("refs/handoff/tasks/ship")?.ok, true, JSON.stringify(r));
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), commit);
    assert.is(gitOut(bare, "fsck", "--strict", "--no-dangling", "--no-progress").trim(), "");
    assert.is(gitOut(bare, "cat-file", "-s", blob), String(big.length));
  } finally {
    store.close();
  }
});

test("outside the plain case the push and the listing are git's, and doctor says why", async () => {
  const { a, url } = await served("plain");
  const status = async (env: Record<string, string> = {}) => {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const store = await openStore({ cwd: a, agent: "tester" });
    try {
      return httpRemoteStatus(store.remoteSource, "origin");
    } finally {
      store.close();
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    }
  };
  assert.equal(await status(), { inProcess: true, url });
  assert.equal(await status({ HANDOFF_HTTP_REMOTE: "git" }), { inProcess: false, why: "HANDOFF_HTTP_REMOTE=git" });
  assert.match((await status({ http_proxy: "http://127.0.0.1:9" }) as { why: string }).why, /http_proxy/);
  gitOut(a, "config", "http.extraHeader", "X-Team: a");
  assert.match((await status() as { why: string }).why, /http\.extraheader/);
  gitOut(a, "config", "--unset", "http.extraHeader");
  gitOut(a, "config", "remote.origin.url", url.replace("http://", "http://user:secret@"));
  assert.match((await status() as { why: string }).why, /credentials/);
  // https:// is taken too (test/https-remote.test.ts), but not with git's TLS settings in the environment.
  gitOut(a, "config", "remote.origin.url", url.replace("http://", "https://"));
  assert.equal(await status({ GIT_SSL_CAINFO: "" }), { inProcess: true, url: url.replace("http://", "https://") });
  assert.match((await status({ GIT_SSL_NO_VERIFY: "1" }) as { why: string }).why, /GIT_SSL_NO_VERIFY/);
  assert.match((await status({ https_proxy: "http://127.0.0.1:9" }) as { why: string }).why, /https_proxy/);
  gitOut(a, "config", "http.https://example.com/.sslCAInfo", "/nowhere");
  assert.match((await status() as { why: string }).why, /http\.https:\/\/example\.com\/\.sslcainfo/i);
  gitOut(a, "config", "--unset", "http.https://example.com/.sslCAInfo");
  gitOut(a, "config", "http.http://example.com/.extraHeader", "X-Team: a");
  assert.equal(await status({ GIT_SSL_CAINFO: "" }), { inProcess: true, url: url.replace("http://", "https://") });
  gitOut(a, "config", "--unset", "http.http://example.com/.extraHeader");
  gitOut(a, "config", "remote.origin.url", url);
  const doctor = cli(["doctor", "--json"], { cwd: a });
  const line = (doctor.json.checks as { name: string; detail: string }[]).find((c) => c.name === "remote-over-http");
  assert.match(line?.detail ?? "", /requests of this process/, doctor.stdout);
  // A remote that does not take pushes over HTTP: learnt once (HTTP 403), then git's, whose refusal is reported.
  const { bare: closed, a: c } = await served("closed");
  gitOut(closed, "config", "http.receivepack", "false");
  const before = handoffRefs(c);
  const add = cli(["task", "add", "x", "--id", "x", "--push", "--json"], { cwd: c, agent: "lead" });
  assert.is.not(add.code, 0);
  const memo = JSON.parse(readFileSync(join(c, ".git/handoff/http-remotes.json"), "utf8"));
  assert.match(JSON.stringify(memo), /HTTP 403/);
  assert.is(gitOut(closed, "for-each-ref", "refs/handoff/"), "");
  assert.ok(handoffRefs(c).length >= before.length);
});

test("a remote that answers garbage, too much, or nothing: an unknown outcome or git's turn, never a grant", async () => {
  const { a } = await served("hostile");
  let mode: "garbage" | "silent" | "refuse" = "garbage";
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (mode === "silent") return; // accepted, never answered
      if (mode === "refuse") return void res.writeHead(401).end();
      res.writeHead(200, { "Content-Type": req.url!.includes("receive") ? "application/x-git-receive-pack-result" : "application/x-git-upload-pack-result" });
      res.end("zzzz not pkt-lines \x00\x01");
    });
  });
  plain.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  gitOut(a, "config", "remote.origin.url", `http://127.0.0.1:${port}/x.git`);
  // The capability check is taken as done (a remote that took pushes before).
  mkdirSync(join(a, ".git/handoff"), { recursive: true });
  writeFileSync(join(a, ".git/handoff/http-remotes.json"), JSON.stringify({ version: 2, remotes: { [`http://127.0.0.1:${port}/x.git`]: { push: { at: Date.now(), ok: true } } } }));
  const store = await openStore({ cwd: a, agent: "tester" });
  try {
    const head = gitOut(a, "rev-parse", "main");
    const next = gitOut(a, "commit-tree", `${head}^{tree}`, "-m", "x");
    const push = (ms = 5000) => pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/tasks/x", new: next, expected: null }], ms);
    assert.is((await push())?.kind, "unknown");
    assert.is(await listOverHttp(store.remoteSource, "origin", ["refs/handoff/"], 5000), null, "a listing of garbage is git's to make");
    // A fetch's answer out of shape is refused, never git's: git's fetch would write what the same server sent it.
    assert.equal(await fetchOverHttp(store.remoteSource, "origin", [next], [], 5000), { ok: false, message: `http://127.0.0.1:${port}/x.git answered the fetch with what is not pkt-lines: the fetch is refused, nothing of it written`, timedOut: false, bound: true });
    mode = "silent";
    const t0 = Date.now();
    const silent = await push(600);
    assert.equal(silent, { kind: "unknown", message: silent!.kind === "unknown" ? silent!.message : "", timedOut: true });
    assert.ok(Date.now() - t0 < 3000);
    const quiet = await listOverHttp(store.remoteSource, "origin", ["refs/handoff/"], 600);
    assert.is(quiet?.ok, false);
    const still = await fetchOverHttp(store.remoteSource, "origin", [next], [], 600);
    assert.equal("ok" in still && !still.ok && still.timedOut, true);
    mode = "refuse";
    assert.is(await push(), null, "HTTP 401: git's, with its credential helpers");
    // ... for the hour: the next push goes to git without asking again.
    assert.match(readFileSync(join(a, ".git/handoff/http-remotes.json"), "utf8"), /credentials wanted for a push/);
    // Names that are not plain refs, a deletion: git's.
    assert.is(await pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/../x", new: next, expected: null }], 5000), null);
    assert.is(await pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/tasks/x", new: null, expected: next }], 5000), null);
  } finally {
    store.close();
  }
});

test("a kept connection the remote drops: a listing goes again on a new one, a push is an outcome read back", async () => {
  const { a } = await served("kept");
  // Each connection answers its first request (an empty listing, or a push report) and drops under any later one.
  const served_ = new Map<unknown, number>();
  let connections = 0;
  const server = createServer((req, res) => {
    const n = (served_.get(req.socket) ?? 0) + 1;
    served_.set(req.socket, n);
    req.resume();
    req.on("end", () => {
      if (n > 1) return void req.socket.destroy();
      res.writeHead(200, { "Content-Type": "application/x-git-upload-pack-result" });
      res.end("0000");
    });
  });
  server.on("connection", () => connections++);
  plain.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}/x.git`;
  gitOut(a, "config", "remote.origin.url", url);
  mkdirSync(join(a, ".git/handoff"), { recursive: true });
  writeFileSync(join(a, ".git/handoff/http-remotes.json"), JSON.stringify({ version: 2, remotes: { [url]: { push: { at: Date.now(), ok: true } } } }));
  const store = await openStore({ cwd: a, agent: "tester" });
  try {
    assert.equal(await listOverHttp(store.remoteSource, "origin", ["refs/handoff/"], 5000), { ok: true, text: "" });
    assert.is(connections, 1);
    // The kept connection is dropped under the second listing: sent again on a new one, answered.
    assert.equal(await listOverHttp(store.remoteSource, "origin", ["refs/handoff/"], 5000), { ok: true, text: "" });
    assert.is(connections, 2);
    assert.equal([...served_.values()], [2, 1]);
    // A listing leaves a kept connection; a push on it that the remote drops may have landed: unknown, not git's turn.
    assert.equal(await listOverHttp(store.remoteSource, "origin", ["refs/handoff/"], 5000), { ok: true, text: "" });
    const head = gitOut(a, "rev-parse", "main");
    const next = gitOut(a, "commit-tree", `${head}^{tree}`, "-m", "x");
    const pushed = await pushOverHttp(store.remoteSource, "origin", [{ ref: "refs/handoff/tasks/x", new: next, expected: null }], 5000);
    assert.is(pushed?.kind, "unknown");
    assert.is(connections, 3);
  } finally {
    store.close();
  }
});

test("a push the remote drops on a kept connection, read back as not landed, goes again once: the claim is granted, the sync pushes", async () => {
  const { bare, url } = await served("dropped");
  // In front of the remote: a proxy that drops the first push going out on a kept connection, as a
  // remote closing a connection it held idle just as the push goes out on it (a loaded machine).
  const upstream = new URL(url);
  const served_ = new Map<unknown, number>();
  let armed = 0;
  let dropped = 0;
  const proxy = createServer((req, res) => {
    const n = (served_.get(req.socket) ?? 0) + 1;
    served_.set(req.socket, n);
    if (armed > 0 && req.method === "POST" && req.url!.endsWith("/git-receive-pack") && n > 1) {
      armed--;
      dropped++;
      req.resume();
      return void req.on("end", () => req.socket.destroy());
    }
    const up = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: false }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on("error", () => req.socket.destroy());
    req.pipe(up);
  });
  plain.push(proxy);
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
  // Cloned directly (a git process waiting on this process's proxy would wait for ever), then through it.
  const a = cloneOf(url);
  gitOut(a, "config", "remote.origin.url", `http://127.0.0.1:${(proxy.address() as { port: number }).port}${upstream.pathname}`);
  // The proxy answers in this process: every command runs without blocking it.
  assert.is((await cliAsync(["task", "add", "ship", "--id", "ship", "--push"], { cwd: a, agent: "lead" })).code, 0);
  armed = 1;
  const won = await cliAsync(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(dropped, 1, "the claim's push went out on a kept connection, and was dropped");
  assert.is(won.code, 0, won.stderr);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "alice");
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/ship"), gitOut(a, "rev-parse", "refs/handoff/tasks/ship"));
  // The same for a sync's push (its listing leaves the kept connection).
  assert.is((await cliAsync(["done", "ship"], { cwd: a, agent: "alice" })).code, 0);
  armed = 1;
  const synced = await cliAsync(["sync"], { cwd: a, agent: "alice" });
  assert.is(dropped, 2, "the sync's push went out on a kept connection, and was dropped");
  assert.is(synced.code, 0, synced.stderr);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).status, "done");
});

test.run();
