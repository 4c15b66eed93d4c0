// `worker --with claude|codex` with the real clients, driven by the scripted model: clone B's
// worker takes the task clone A's `wait` pushed, the model writes a result file with its own
// file tool and answers; A gets the answer and the file. A scripted `FAILED: ...` fails the wait.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { clientBin, clientEnv, cost, newHome, shims } from "./agents/clients.ts";
import { startModel, type ModelServer, type Turn } from "./agents/model-server.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";
import { httpRemote, start, stop, type Machines, type Proc } from "./support/handover.ts";
import { mkdirSync, writeFileSync } from "node:fs";

let net: Machines;
test.before(async () => {
  net = await httpRemote("agents");
});
test.after(async () => {
  await net.server.stop();
  cleanupTemp();
});

/**
 * The task's out folder, found when the model needs it: the worker runs with a private TMPDIR,
 * so the one task folder in it is this task's.
 */
function outDirIn(tmp: string): string {
  const dir = readdirSync(tmp).find((n) => n.startsWith("handoff-t-"));
  if (!dir) throw new Error(`no task folder in ${tmp}`);
  return join(tmp, dir, "out");
}

/** Turns whose tool input is computed when the model plays them (the out folder exists by then). */
function lazyTurn(make: () => Turn): Turn {
  return new Proxy({} as Turn, { get: (_t, key) => (make() as any)[key], has: (_t, key) => key in make() });
}

interface Run {
  home: string;
  waited: Proc;
  worker: Proc;
  model: ModelServer;
  code: number;
}

async function handOver(client: "claude" | "codex", turns: (tmp: string) => Turn[], objective: string): Promise<Run> {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const tmp = tempDir("handoff-worker-tmp-");
  const home = newHome();
  const model = await startModel(client === "claude" ? "anthropic" : "openai", turns(tmp));
  const bin = dirname(clientBin(client));
  let env: NodeJS.ProcessEnv;
  if (client === "claude") {
    env = clientEnv(home, { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy", TMPDIR: tmp, PATH: `${shims()}:${bin}:${process.env.PATH}` });
  } else {
    const codexHome = join(home, ".codex");
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, "config.toml"),
      ['model = "gpt-5.5"', 'model_provider = "scripted"', "[model_providers.scripted]", 'name = "scripted"', `base_url = "${model.url}/v1"`, 'wire_api = "responses"'].join("\n") + "\n",
    );
    env = clientEnv(home, { CODEX_HOME: codexHome, OPENAI_API_KEY: "dummy", TMPDIR: tmp, PATH: `${shims()}:${bin}:${process.env.PATH}` });
  }
  const worker = start(["worker", "--with", client, "--once", "--poll", "100ms"], { cwd: b, env });
  const waited = start(["wait", "--objective", objective, "--to", `${client}@m2`, "--timeout", "90s", "--json"], { cwd: a, agent: "alice" });
  try {
    const code = await waited.exited;
    await worker.exited;
    return { home, waited, worker, model, code };
  } finally {
    await stop(worker);
    await model.stop();
  }
}

test("worker --with claude: Claude Code writes a result file with Write and answers; wait gets both", async () => {
  const t0 = Date.now();
  const r = await handOver(
    "claude",
    (tmp) => [lazyTurn(() => ({ tools: [{ name: "Write", input: { file_path: join(outDirIn(tmp), "answer.md"), content: "# the answer\n42\n" } }] })), { text: "Wrote answer.md: the answer is 42." }],
    "find the answer",
  );
  cost("claude", "worker --with claude round trip", Date.now() - t0);
  assert.is(r.code, 0, r.waited.stderr() + r.worker.stderr());
  const out = JSON.parse(r.waited.stdout());
  assert.is(out.status, "done");
  assert.match(out.output, "the answer is 42");
  assert.equal(out.files.map((f: any) => f.name), ["answer.md"]);
  assert.is(readFileSync(out.files[0].path, "utf8"), "# the answer\n42\n");
  // The worker named itself after the client and the machine.
  assert.match(r.worker.stderr(), "worker claude@m2 on m2");
  // The prompt fenced the task as untrusted input and said where results go and how to fail.
  const prompt = r.model.seen();
  assert.match(prompt, "BEGIN UNTRUSTED TASK");
  assert.match(prompt, "| find the answer");
  assert.match(prompt, "FAILED: <reason>");
});

test("worker --with codex: Codex adds a result file with apply_patch and answers; wait gets both", async () => {
  const t0 = Date.now();
  const r = await handOver(
    "codex",
    (tmp) => [lazyTurn(() => ({ tools: [{ name: "apply_patch", input: `*** Begin Patch\n*** Add File: ${join(outDirIn(tmp), "answer.md")}\n+made by codex\n*** End Patch\n` }] })), { text: "Added answer.md." }],
    "make the file",
  );
  cost("codex", "worker --with codex round trip", Date.now() - t0);
  assert.is(r.code, 0, r.waited.stderr() + r.worker.stderr());
  const out = JSON.parse(r.waited.stdout());
  assert.is(out.status, "done");
  assert.is(out.output.trim(), "Added answer.md.");
  assert.equal(out.files.map((f: any) => f.name), ["answer.md"]);
  assert.is(readFileSync(out.files[0].path, "utf8"), "made by codex\n");
  assert.match(r.worker.stderr(), "worker codex@m2 on m2");
  // The trust entry for the task's worktree was there for the run only.
  const config = readFileSync(join(r.home, ".codex", "config.toml"), "utf8");
  assert.not.match(config, "git-handoff worker");
  assert.not.match(config, "worktree");
});

test("a model that answers FAILED: no access -> wait exits 6 with the reason", async () => {
  const r = await handOver("claude", () => [{ text: "FAILED: no access\nI cannot reach the database." }], "read the database");
  assert.is(r.code, 6, r.waited.stderr() + r.worker.stderr());
  const out = JSON.parse(r.waited.stdout());
  assert.is(out.status, "failed");
  assert.is(out.failure_reason, "no access");
});

test.run();
