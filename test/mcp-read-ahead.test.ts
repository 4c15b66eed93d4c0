// A server reads the task listing and the lease set again once it is quiet after a call
// (session.ts readAhead): what the call moved is learnt between requests, not at the start of the
// next one. The reads happen with no call in flight, and never after the session stopped.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer, directCalls } from "../src/mcp/server.ts";
import { McpSession } from "../src/mcp/session.ts";
import type { Store } from "../src/store/store.ts";
import { addTask } from "../src/store/task-store.ts";
import { cleanEnv, cleanupTemp, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serve(repo: string) {
  const session = await McpSession.open({ cwd: repo, env: cleanEnv({}), agent: "alice" });
  const server = createServer(session, { log: () => {} });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  directCalls(server).attach(serverSide);
  const client = new Client({ name: "read-ahead", version: "0" });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  };
  return { session, call, close: async () => (await client.close(), await server.close(), session.close()) };
}

/** Records each listing of `store` (its own property over the class's method). */
function listings(store: Store): string[] {
  const seen: string[] = [];
  const list = store.listRefs.bind(store);
  store.listRefs = (prefix: string) => {
    seen.push(prefix);
    return list(prefix);
  };
  return seen;
}

/** A served repository with one task `t1` (of `scope`), its listings recorded, after alice claimed it. */
async function afterClaim(scope: string[]) {
  const s = await serve(tempRepo());
  const store = await s.session.store();
  await addTask(store, { id: "t1", objective: "one", priority: 0, scope, maxAttempts: 3 });
  const seen = listings(store);
  await s.call("claim_task", { id: "t1" });
  return { s, seen };
}

test("after a call, once quiet, the server lists the tasks and reads the leases with no call in flight", async () => {
  const { s, seen } = await afterClaim(["src/**"]);
  try {
    const atAnswer = seen.length;
    await sleep(60);
    assert.ok(seen.slice(atAnswer).includes("refs/handoff/tasks/"), `the task listing read once quiet (listed after the answer: ${JSON.stringify(seen.slice(atAnswer))})`);
    const quietAgain = seen.length;
    await sleep(60);
    assert.is(seen.length, quietAgain, "one read ahead for one quiet spell");
  } finally {
    await s.close();
  }
});

test("nothing is read ahead while a call runs: only once the last one has ended and the server is quiet", async () => {
  const { s, seen } = await afterClaim(["src/**"]);
  try {
    // The next call arrives before the quiet spell ends, and runs on (a claim waiting for its turn).
    s.session.callStarted();
    const atStart = seen.length;
    await sleep(60);
    assert.is(seen.length, atStart, "nothing listed while a call runs");
    s.session.callEnded();
    await sleep(60);
    assert.ok(seen.slice(atStart).includes("refs/handoff/tasks/"), "listed once the call ended and the server was quiet");
  } finally {
    await s.close();
  }
});

test("a stopped session reads nothing ahead", async () => {
  const { s, seen } = await afterClaim([]);
  try {
    s.session.stop();
    const atStop = seen.length;
    await sleep(60);
    assert.is(seen.length, atStop, "nothing listed after the stop");
  } finally {
    await s.close();
  }
});

test.run();
