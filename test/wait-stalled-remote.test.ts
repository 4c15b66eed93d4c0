// A remote that stops answering while `wait` waits (it accepts connections and never replies):
// --timeout and Ctrl-C still end the wait within a few seconds, with their exit status and the
// documented body, and say that the cancel could not be confirmed. The look in flight is given up
// at the deadline or the signal, and the cancel has a short bound of its own, where the per-call
// deadlines (20 s each by default) kept the waiter for close to a minute.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cliAsync, gitOut } from "./support/repo.ts";
import { overStdio } from "./support/mcp.ts";
import { httpRemote, remoteTask, start, until, type Machines } from "./support/handover.ts";
import { stallingProxy } from "./support/servers.ts";

let net: Machines;
let proxy: Awaited<ReturnType<typeof stallingProxy>>;
test.before(async () => {
  net = await httpRemote("stall");
  proxy = await stallingProxy(Number(new URL(net.server.url("stall")).port));
});
test.after(async () => {
  proxy.stop();
  await net.server.stop();
  cleanupTemp();
});

/** A clone whose origin goes through the proxy. */
function cloneBehindProxy(): string {
  const dir = net.clone("m1");
  gitOut(dir, "remote", "set-url", "origin", `http://127.0.0.1:${proxy.port}/stall.git`);
  return dir;
}

const idFrom = (stderr: string) => /created (t-\S+) and pushed it/.exec(stderr)?.[1] ?? null;

test("--timeout while the remote stops answering: exit 8 soon after the deadline, the documented body, the cancel unconfirmed", async () => {
  proxy.pass();
  const a = cloneBehindProxy();
  const waited = start(["wait", "--objective", "nobody answers", "--to", "nobody@nowhere", "--timeout", "3s", "--json"], { cwd: a, agent: "alice" });
  await until(() => idFrom(waited.stderr()) !== null, "the task to be pushed");
  proxy.stall();
  const stalled = Date.now();
  assert.is(await waited.exited, 8, waited.stderr());
  const took = Date.now() - stalled;
  // 3 s of waiting, at most 5 s for the cancel, and some slack for a loaded machine.
  assert.ok(took < 11_000, `took ${took} ms after the remote stalled`);
  const out = JSON.parse(waited.stdout());
  assert.is(out.id, idFrom(waited.stderr()));
  assert.is(out.code, "timed_out");
  assert.is(out.status, "todo");
  assert.equal([out.output, out.files, out.refused], ["", [], []]);
  assert.is(out.warnings.length, 1);
  assert.match(out.warnings[0], /the cancel of t-\S+ could not be confirmed within 5 s/);
  assert.match(waited.stderr(), /timed out; the cancel of .* could not be confirmed .*it may still be todo on the remote/);
  assert.not.match(waited.stderr(), /still waiting/, "no warning about a look after the deadline");
  proxy.pass();
  assert.is(remoteTask(net.bare, out.id).status, "todo", "the cancel never reached the remote");
});

test("Ctrl-C while the remote stops answering: exit 130 within a few seconds, code interrupted, the cancel unconfirmed", async () => {
  proxy.pass();
  const a = cloneBehindProxy();
  const waited = start(["wait", "--objective", "interrupt me", "--to", "nobody@nowhere", "--json"], { cwd: a, agent: "alice" });
  await until(() => idFrom(waited.stderr()) !== null, "the task to be pushed");
  proxy.stall();
  // Long enough for a look to be under way, held by the silent remote.
  await new Promise((r) => setTimeout(r, 1500));
  const sent = Date.now();
  waited.child.kill("SIGINT");
  assert.is(await waited.exited, 130, waited.stderr());
  const took = Date.now() - sent;
  assert.ok(took < 8000, `took ${took} ms after Ctrl-C`);
  const out = JSON.parse(waited.stdout());
  assert.is(out.code, "interrupted");
  assert.is(out.status, "todo");
  assert.match(out.warnings[0], /could not be confirmed within 5 s/);
  assert.match(waited.stderr(), /interrupted: stopping \(Ctrl-C again to quit at once\)/);
  proxy.pass();
});

test("MCP wait_task while the remote stops answering: answers at its bound, not after the remote's per-call deadline", async () => {
  proxy.pass();
  const a = cloneBehindProxy();
  const added = await cliAsync(["task", "add", "watched", "--id", "watched", "--to", "nobody@nowhere", "--push"], { cwd: a, agent: "lead" });
  assert.is(added.code, 0, added.stderr);
  const mcp = await overStdio(a, { agent: "alice" });
  try {
    proxy.stall();
    const started = Date.now();
    const r = await mcp.ok("wait_task", { id: "watched", timeout_seconds: 3 });
    const took = Date.now() - started;
    assert.is(r.final, false);
    assert.is(r.task.status, "todo");
    assert.ok(took < 7000, `answered after ${took} ms`);
  } finally {
    proxy.pass();
    await mcp.close();
  }
});

test.run();
