// What the drift notice and request delivery cost the full Node pre-edit hook: an agent with a
// declaration and 8 other agents' logs holding 40 release requests (none for it), editing a file
// inside its declaration (the common case: nothing more is read) and one outside it that was
// already noticed (tasks and the log index are read), against `node -e 0` in the same run.
// Run: npm run build && node --import tsx test/bench/drift-hook.bench.ts
// With BENCH_BASE_CLI=<another build's dist/git-handoff.cjs> the same hook runs are also timed
// against that build, interleaved (the ratio is what drift and delivery add).
import { spawnSync } from "node:child_process";
import { CLI, cleanEnv, cleanupTemp, tempRepo } from "../support/repo.ts";
import { fmt, interleave, timeProcess } from "./stats.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const repo = tempRepo();
const handoff = (agent: string, args: string[]) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: agent }), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${agent} ${args.join(" ")}: ${r.stderr}`);
};
handoff("me", ["session", "start", "--objective", "bench", "--files", "src/me/**"]);
for (let a = 0; a < 8; a++) {
  handoff(`agent-${a}`, ["session", "start", "--objective", "bench", "--files", `src/a${a}/**`]);
  handoff(`agent-${a}`, ["lease", `src/a${a}/held.ts`]);
}
for (let a = 0; a < 8; a++) for (let k = 0; k < 5; k++) handoff(`agent-${(a + 1) % 8}`, ["ask", `agent-${a}`, "--release", `src/a${a}/held.ts`]);

const payload = (file: string) => JSON.stringify({ session_id: "bench", hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: `${repo}/${file}`, old_string: "a", new_string: "b" }, cwd: repo });
const env = cleanEnv({ HANDOFF_AGENT: "me" });
const hookOf = (cli: string) => (file: string) => () => timeProcess(process.execPath, [cli, "hook", "claude-pre-tool-use"], { cwd: repo, env, input: payload(file) });
const hook = hookOf(CLI);
hook("docs/outside.md")(); // the one notice, and a warm index
const inside = interleave(ROUNDS, () => timeProcess(process.execPath, ["-e", "0"]), hook("src/me/x.ts"));
const outside = interleave(ROUNDS, () => timeProcess(process.execPath, ["-e", "0"]), hook("docs/outside.md"));
console.log(
  `pre-edit hook with a declaration, 40 requests in 8 other logs: median ${fmt(inside.b, 1)} ms inside the declaration, ${fmt(outside.b, 1)} ms outside it (already noticed) ` +
    `vs node -e 0 ${fmt(inside.a, 1)} ms -> ${fmt(inside.ratio)}x / ${fmt(outside.ratio)}x node start`,
);
const base = process.env.BENCH_BASE_CLI;
if (base) {
  const baseHook = hookOf(base);
  const vsIn = interleave(ROUNDS, baseHook("src/me/x.ts"), hook("src/me/x.ts"));
  const vsOut = interleave(ROUNDS, baseHook("docs/outside.md"), hook("docs/outside.md"));
  console.log(`vs ${base}: ${fmt(vsIn.ratio)}x inside the declaration (${fmt(vsIn.a, 1)} -> ${fmt(vsIn.b, 1)} ms), ${fmt(vsOut.ratio)}x outside it (${fmt(vsOut.a, 1)} -> ${fmt(vsOut.b, 1)} ms)`);
}
cleanupTemp();
