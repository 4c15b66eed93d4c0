// What the shell matcher costs: the Claude PreToolUse hook also runs before every Bash command.
// As init installs it (`git-handoff-hook`, the sh fast path), a command with no path-like word, or
// whose words no other agent holds exclusively, is answered without Node. The full hook (`git
// handoff hook`, what the fast path hands over to) answers a command with no path-like word
// before opening the store; one naming files reads the leases near them. Against node -e 0 and
// the edit check, 1,000 live leases.
// Run: npm run build && node --import tsx test/bench/shell-hook.bench.ts
import { spawnSync } from "node:child_process";
import { CLI, cleanEnv, cleanupTemp, tempRepo } from "../support/repo.ts";
import { FAST_HOOK } from "../support/hook-runner.ts";
import { seedLeases } from "./lease-fixture.ts";
import { fmt, interleave, median } from "./stats.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);
const repo = tempRepo();
const env = cleanEnv({ HANDOFF_AGENT: "bench-agent" });
await seedLeases(repo, 100, 10);

const payload = (tool_name: string, tool_input: object) => JSON.stringify({ session_id: "bench", cwd: repo, hook_event_name: "PreToolUse", tool_name, tool_input });
const NO_PATH = payload("Bash", { command: "npm test -- --watch" });
const PATHS = payload("Bash", { command: "grep -n TODO pkg42/src/file3.ts pkg7/src/other.ts | head" });
const EDIT = payload("Edit", { file_path: `${repo}/pkg42/src/other.ts`, old_string: "a", new_string: "b" });

const run = (args: string[], input = "") => {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: repo, env, input, stdio: ["pipe", "pipe", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const hook = (input: string) => () => run([CLI, "hook", "claude-pre-tool-use"], input);
const node = () => run(["-e", "0"]);
hook(PATHS)();
node();

// The installed hook: the fast path answers both commands itself (no Node started).
const fastRun = (input: string, extra: NodeJS.ProcessEnv = {}) => spawnSync(FAST_HOOK, ["claude-pre-tool-use"], { cwd: repo, env: { ...env, ...extra }, input, encoding: "utf8" });
for (const input of [NO_PATH, PATHS]) {
  const r = fastRun(input, { HANDOFF_FAST_HOOK_WHY: "1" });
  if (r.status !== 0 || r.stdout !== "" || r.stderr !== "") throw new Error(`the fast path should answer this command itself, with nothing: ${r.stderr}`);
}
const fast = (input: string) => () => {
  const t = process.hrtime.bigint();
  if (fastRun(input).status !== 0) throw new Error("fast path failed");
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const fastNone = interleave(ROUNDS, node, fast(NO_PATH));
const fastPaths = interleave(ROUNDS, node, fast(PATHS));
console.log(`As installed (git-handoff-hook, the fast path): no path word ${fmt(fastNone.b, 1)} ms (${fmt(fastNone.ratio)}x node -e 0), two paths ${fmt(fastPaths.b, 1)} ms (${fmt(fastPaths.ratio)}x)`);

const none = interleave(ROUNDS, node, hook(NO_PATH));
const paths = interleave(ROUNDS, node, hook(PATHS));
const edit = interleave(ROUNDS, node, hook(EDIT));
console.log(
  `The full hook on Bash, 1,000 live leases: no path word ${fmt(none.b, 1)} ms (${fmt(none.ratio)}x node -e 0), ` +
    `two paths ${fmt(paths.b, 1)} ms (${fmt(paths.ratio)}x), an Edit ${fmt(edit.b, 1)} ms (${fmt(edit.ratio)}x)`,
);
// CPU time (user + system) is less disturbed than wall time when other work shares the machine.
const CPU_PROBE = "process.on('exit',()=>{const r=process.resourceUsage();process.stdout.write(String((r.userCPUTime+r.systemCPUTime)/1000))})";
const cpu = (input: string) => {
  const r = spawnSync(process.execPath, [CLI, "hook", "claude-pre-tool-use"], { cwd: repo, env: { ...env, HANDOFF_HOOK_PROFILE: "1" }, input, encoding: "utf8" });
  return Number(/profile cpu ([\d.]+) ms/.exec(r.stderr)?.[1]);
};
const nodeCpu = () => Number(spawnSync(process.execPath, ["-e", CPU_PROBE], { encoding: "utf8" }).stdout);
const c = { none: [] as number[], paths: [] as number[], edit: [] as number[], node: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  c.node.push(nodeCpu());
  c.none.push(cpu(NO_PATH));
  c.paths.push(cpu(PATHS));
  c.edit.push(cpu(EDIT));
}
const n = median(c.node);
console.log(`CPU time: no path word ${fmt(median(c.none) / n)}x node -e 0, two paths ${fmt(median(c.paths) / n)}x, an Edit ${fmt(median(c.edit) / n)}x (node -e 0 ${fmt(n, 1)} ms)`);
cleanupTemp();
