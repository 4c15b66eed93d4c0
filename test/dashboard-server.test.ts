// The dashboard's server without a browser: who may talk to it (one-time link, cookie, Host and
// Origin), read-only mode, bad command lines and bad actions, the live stream.
import { request } from "node:http";
import { createServer } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startDashboard, type DashboardProcess } from "./support/dashboard.ts";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";

/** `git handoff dashboard ARGS` expected to refuse at once; bounded, so a server that starts fails the test. */
function refused(repo: string, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, "dashboard", ...args], { cwd: repo, env: cleanEnv(), encoding: "utf8", timeout: 20_000 });
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status ?? -1, stderr: r.stderr, json };
}

test.after(cleanupTemp);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(d: DashboardProcess, path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: d.port, path, method: o.method ?? "GET", headers: { Host: `127.0.0.1:${d.port}`, ...o.headers } }, (res) => {
      let body = "";
      res.on("data", (b) => (body += b));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

async function login(d: DashboardProcess): Promise<string> {
  const r = await call(d, new URL(d.link).pathname + new URL(d.link).search);
  assert.is(r.status, 303);
  assert.is(r.headers.location, "/");
  const set = String(r.headers["set-cookie"]);
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Strict/);
  return set.split(";")[0]!;
}

/** Tasks a and b, a claimed by alice: written in-process (support/seed.ts). */
async function repoWithTasks(): Promise<string> {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ["a", "b"].map((id) => ({ id, objective: `task ${id}` })));
  await storeClaim({ cwd: repo, agent: "alice" }, "a");
  return repo;
}

test("only the one-time link's cookie opens the dashboard; Host and Origin must be ours", async () => {
  const repo = await repoWithTasks();
  const d = await startDashboard(repo, [], { HANDOFF_AGENT: "lead" });
  try {
    for (const path of ["/", "/api/state", "/api/stream", "/api/events"]) assert.is((await call(d, path)).status, 403, `${path} without cookie`);
    assert.is((await call(d, "/auth?token=00")).status, 403, "a wrong token");
    const cookie = await login(d);
    assert.is((await call(d, new URL(d.link).pathname + new URL(d.link).search)).status, 403, "the link works once");

    const page = await call(d, "/", { headers: { Cookie: cookie } });
    assert.is(page.status, 200);
    assert.match(String(page.headers["content-security-policy"]), /script-src 'sha256-/);
    assert.is(page.headers["referrer-policy"], "no-referrer");
    assert.ok(page.body.length < 150_000, "page within budget even before compression");

    const state = JSON.parse((await call(d, "/api/state", { headers: { Cookie: cookie } })).body);
    assert.equal(state.tasks.map((t: { id: string; status: string }) => [t.id, t.status]), [["a", "claimed"], ["b", "todo"]]);
    assert.is(state.me.agent, "lead");

    // DNS rebinding: a page on evil.example resolved to 127.0.0.1 sends its own Host.
    assert.is((await call(d, "/api/state", { headers: { Cookie: cookie, Host: "evil.example" } })).status, 403);
    assert.is((await call(d, "/api/state", { headers: { Cookie: cookie, Host: "localhost:" + d.port } })).status, 403);
    assert.is((await call(d, "/api/state", { headers: { Cookie: cookie, Origin: "http://evil.example" } })).status, 403);
    const before = handoffRefs(repo);
    const post = (headers: Record<string, string>) =>
      call(d, "/api/action", { method: "POST", headers: { Cookie: cookie, "Content-Type": "application/json", ...headers }, body: JSON.stringify({ action: "reject", task: "a", reason: "x" }) });
    assert.is((await post({})).status, 403, "a write without Origin");
    assert.is((await post({ Origin: "http://evil.example" })).status, 403, "a write from another origin");
    assert.is((await post({ Origin: d.origin, "Sec-Fetch-Site": "cross-site" })).status, 403, "a cross-site write");
    assert.is(handoffRefs(repo), before, "no ref moved");
  } finally {
    await d.stop();
  }
});

test("bad actions are refused with a code and leave every ref as it was", async () => {
  const repo = await repoWithTasks();
  const d = await startDashboard(repo, [], { HANDOFF_AGENT: "lead" });
  try {
    const cookie = await login(d);
    const before = handoffRefs(repo);
    const act = async (body: unknown) => {
      const r = await call(d, "/api/action", { method: "POST", headers: { Cookie: cookie, Origin: d.origin, "Content-Type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
      return { status: r.status, error: JSON.parse(r.body).error };
    };
    assert.equal(await act({ action: "delete everything" }).then((r) => [r.status, r.error.code]), [400, "usage"]);
    assert.equal(await act("not json").then((r) => [r.status, r.error.code]), [400, "invalid_input"]);
    assert.equal(await act({ action: "accept", task: "../../heads/main" }).then((r) => [r.status, r.error.code]), [400, "invalid_input"]);
    assert.equal(await act({ action: "accept", task: "b" }).then((r) => [r.status, r.error.code]), [409, "wrong_state"]);
    // alice is not stale: the page does not take her claim away.
    assert.equal(await act({ action: "reclaim", task: "a", reason: "mine now" }).then((r) => [r.status, r.error.code]), [409, "wrong_state"]);
    assert.equal(await act({ action: "reclaim", task: "a" }).then((r) => [r.status, r.error.code]), [400, "usage"]);
    assert.equal(await act({ action: "reclaim", task: "a", reason: "   " }).then((r) => [r.status, r.error.code]), [400, "usage"], "a blank reason is none");
    assert.equal(await act({ action: "reject", task: "a" }).then((r) => [r.status, r.error.code]), [400, "usage"], "reject needs a reason, as on the page");
    assert.equal(await act({ action: "unlease", pattern: "src/x.ts", reason: " \t" }).then((r) => [r.status, r.error.code]), [400, "usage"]);
    assert.equal(await act({ action: "unlease", pattern: "src/x.ts", reason: "r" }).then((r) => [r.status, r.error.code]), [409, "not_found"]);
    assert.is(handoffRefs(repo), before);
    const events = JSON.parse((await call(d, "/api/events?type=nonsense", { headers: { Cookie: cookie } })).body);
    assert.is(events.error.code, "invalid_input");
  } finally {
    await d.stop();
  }
});

test("--read-only serves the state but no action", async () => {
  const repo = await repoWithTasks();
  const d = await startDashboard(repo, ["--read-only"], { HANDOFF_AGENT: "lead" });
  try {
    const cookie = await login(d);
    const state = JSON.parse((await call(d, "/api/state", { headers: { Cookie: cookie } })).body);
    assert.is(state.read_only, true);
    const before = handoffRefs(repo);
    const r = await call(d, "/api/action", { method: "POST", headers: { Cookie: cookie, Origin: d.origin }, body: JSON.stringify({ action: "reclaim", task: "a", reason: "r" }) });
    assert.is(r.status, 403);
    assert.is(handoffRefs(repo), before);
  } finally {
    await d.stop();
  }
});

test("a claim that runs out while no ref moves: the next read of the state shows it free, page or no page", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "--id", "s", "short", "--scope", "s.txt"], { cwd: repo, agent: "lead" }).code, 0);
  const claimed = cli(["claim", "s", "--ttl", "3s", "--json"], { cwd: repo, agent: "alice" });
  assert.is(claimed.code, 0);
  // Read now: on a loaded machine the claim may have run out before the dashboard is up.
  const expires = Date.parse(claimed.json.claim.expires_at);
  const d = await startDashboard(repo, ["--read-only"], { HANDOFF_AGENT: "lead" });
  try {
    const cookie = await login(d);
    const card = async () => {
      const st = JSON.parse((await call(d, "/api/state", { headers: { Cookie: cookie } })).body);
      return [st.tasks.find((t: { id: string }) => t.id === "s").status, st.leases.length];
    };
    const first = await card();
    if (Date.now() < expires) assert.equal(first, ["claimed", 1]);
    await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now()) + 300));
    assert.equal(await card(), ["todo", 0], "the state served is rebuilt once a claim in it has run out");
  } finally {
    await d.stop();
  }
});

test("the stream pushes the state again when a ref changes, wherever the refs live", async () => {
  const repo = await repoWithTasks();
  const d = await startDashboard(repo, [], { HANDOFF_AGENT: "lead" });
  try {
    const cookie = await login(d);
    const states: { tasks: { id: string; status: string; holder: string | null }[] }[] = [];
    let buffer = "";
    const req = request({ host: "127.0.0.1", port: d.port, path: "/api/stream", headers: { Host: `127.0.0.1:${d.port}`, Cookie: cookie } }, (res) => {
      assert.is(res.headers["content-type"], "text/event-stream");
      res.on("data", (b) => {
        buffer += b;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const msg = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^event: state\ndata: (.*)$/s.exec(msg);
          if (data) states.push(JSON.parse(data[1]!));
        }
      });
    });
    req.end();
    const until = async (what: string, ok: () => boolean) => {
      for (const deadline = Date.now() + 20_000; !ok(); await new Promise((r) => setTimeout(r, 50))) if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    };
    await until("the first state", () => states.length >= 1);
    assert.is(cli(["claim", "b"], { cwd: repo, agent: "bob" }).code, 0);
    await until("b claimed by bob", () => states.some((s) => s.tasks.some((t) => t.id === "b" && t.holder === "bob")));
    // The refs move into a separate store and back (git handoff store): the stream follows them.
    assert.is(cli(["store", "--separate"], { cwd: repo }).code, 0);
    assert.is(cli(["release", "b"], { cwd: repo, agent: "bob" }).code, 0);
    await until("b released, in the separate store", () => states.at(-1)!.tasks.some((t) => t.id === "b" && t.holder === null));
    assert.is(cli(["store", "--shared"], { cwd: repo }).code, 0);
    assert.is(cli(["claim", "b"], { cwd: repo, agent: "carol" }).code, 0);
    await until("b claimed by carol, back among the repository's refs", () => states.at(-1)!.tasks.some((t) => t.id === "b" && t.holder === "carol"));
    req.destroy();
  } finally {
    await d.stop();
  }
});

test("--sync fetches what other clones pushed and never pushes itself", async () => {
  const root = tempDir("handoff-dash-sync-");
  const origin = `${root}/origin.git`;
  gitOut(root, "init", "-q", "--bare", origin);
  const here = tempRepo();
  const there = tempRepo();
  for (const r of [here, there]) gitOut(r, "remote", "add", "origin", origin);
  assert.is(cli(["task", "add", "--id", "local-only", "not pushed"], { cwd: here, agent: "lead" }).code, 0);
  const d = await startDashboard(here, ["--sync", "1s"], { HANDOFF_AGENT: "lead" });
  try {
    const cookie = await login(d);
    assert.is(cli(["task", "add", "--id", "remote-task", "from the other clone"], { cwd: there, agent: "other" }).code, 0);
    const pushed = cli(["sync"], { cwd: there, agent: "other" });
    assert.is(pushed.code, 0, pushed.stderr);
    let state: any;
    for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 200))) {
      state = JSON.parse((await call(d, "/api/state", { headers: { Cookie: cookie } })).body);
      if (state.tasks.some((t: { id: string }) => t.id === "remote-task")) break;
      if (Date.now() > deadline) throw new Error("the remote's task never showed");
    }
    assert.is(state.sync.remote, "origin");
    assert.ok(state.sync.last_sync?.ok, "the dashboard's fetch is reported");
    assert.is(gitOut(origin, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/"), "refs/handoff/tasks/remote-task", "nothing pushed from here");
  } finally {
    await d.stop();
  }
});

test("--open hands the link to the desktop's opener", async () => {
  const repo = tempRepo();
  const bin = tempDir("handoff-opener-");
  const seen = `${bin}/opened.txt`;
  writeFileSync(`${bin}/xdg-open`, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
  chmodSync(`${bin}/xdg-open`, 0o755);
  const d = await startDashboard(repo, ["--open"], { PATH: `${bin}:${process.env.PATH}` });
  try {
    for (const deadline = Date.now() + 20_000; !existsSync(seen); await new Promise((r) => setTimeout(r, 100))) {
      if (Date.now() > deadline) throw new Error("the opener was never called");
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.is(readFileSync(seen, "utf8"), d.link);
  } finally {
    await d.stop();
  }
});

test("command line: 127.0.0.1 only, a port in use is a clear error, --sync needs a remote", async () => {
  const repo = tempRepo();
  const host = refused(repo, ["--host", "0.0.0.0"]);
  assert.is(host.code, 2);
  assert.match(host.stderr, /binds to 127\.0\.0\.1 only/);
  assert.is(refused(repo, ["--port", "http"]).code, 2);
  assert.is(refused(repo, ["--port", "70000"]).code, 2);
  assert.is(refused(repo, ["--sync", "soon"]).code, 2);

  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", () => r()));
  const port = (taken.address() as { port: number }).port;
  try {
    const r = refused(repo, ["--port", String(port), "--json"]);
    assert.is(r.code, 3);
    assert.is(r.json.error.code, "port_in_use");
    assert.match(r.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use`));
  } finally {
    taken.close();
  }
  const noRemote = refused(repo, ["--sync", "30s"]);
  assert.is(noRemote.code, 4);
  assert.match(noRemote.stderr, /--sync needs a sync remote/);
  gitOut(repo, "status"); // the repository is untouched and usable
});

test.run();
