// The pre-edit hook as init installs it (`git-handoff-hook claude-pre-tool-use`, the sh fast path
// that starts Node only when the full hook has something to say), 100 agents holding 1,000 live
// leases, against a bare `node -e 0` in the same run, as ratios:
//   free file (nobody leases it; answered by the fast path) ........ goal <= 0.3x
//   warned edit and denied edit (answered by the fast path, the full hook logs the catch after) goal <= 1.2x
//   outside a repository using git-handoff (the user-scope script)  goal <= 0.1x
//   the full hook's own work after Node started (stdin read to answer written) goal < 0.1x
// Run: npm run build && node --import tsx test/bench/fast-hook.bench.ts
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { USER_HOOK_SCRIPT } from "../../src/setup/user-install.ts";
import { CLI, cleanEnv, cleanupTemp, tempDir, tempRepo } from "../support/repo.ts";
import { FAST_HOOK } from "../support/hook-runner.ts";
import { editPayload, seedLeases } from "./lease-fixture.ts";
import { fmt, interleave, median } from "./stats.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);
const repo = tempRepo();
// The agent's own environment: the detached catch writer is not waited for.
const env = cleanEnv({ HANDOFF_AGENT: "bench-agent" });
delete env.HANDOFF_HOOK_CATCH_WAIT;
await seedLeases(repo, 100, 10);

const payload = (file: string) => editPayload(repo, file);
const FREE = payload("pkg42/src/other.ts");
const WARN = payload("pkg42/src/file3.ts");
const DENY = payload("pkg5/lib7/x.ts"); // agent-5 holds pkg5/lib7/** exclusively

function run(cmd: string, args: string[], input = "", cwd = repo, extra: NodeJS.ProcessEnv = {}) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env: { ...env, ...extra }, input, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} exited ${r.status}: ${r.stderr}`);
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, stdout: r.stdout, stderr: r.stderr };
}
const node = () => run(process.execPath, ["-e", "0"]).ms;
const hook = (input: string, extra: NodeJS.ProcessEnv = {}) => () => run(FAST_HOOK, ["claude-pre-tool-use"], input, repo, extra).ms;

// Sanity, and the first run of the full hook, which compiles the cache the fast path reads.
if (run(FAST_HOOK, ["claude-pre-tool-use"], FREE).stdout !== "") throw new Error("a free file is answered with nothing");
const why = run(FAST_HOOK, ["claude-pre-tool-use"], FREE, repo, { HANDOFF_FAST_HOOK_WHY: "1" });
if (why.stderr) throw new Error(`the fast path should answer a free file itself: ${why.stderr}`);
if (!/warn: pkg42\/src\/file3\.ts is leased by agent-42/.test(run(FAST_HOOK, ["claude-pre-tool-use"], WARN).stdout)) throw new Error("warn expected");
if (!/"permissionDecision":"deny"/.test(run(FAST_HOOK, ["claude-pre-tool-use"], DENY).stdout)) throw new Error("deny expected");
node();

const free = interleave(ROUNDS, node, hook(FREE));
const warn = interleave(ROUNDS, node, hook(WARN));
const deny = interleave(ROUNDS, node, hook(DENY));
// What the fast path adds before it hands over: the same denied edit with the full hook called directly.
const direct = interleave(ROUNDS, node, () => run(process.execPath, [CLI, "hook", "claude-pre-tool-use"], DENY).ms);
const waited = interleave(Math.max(5, ROUNDS >> 1), node, hook(DENY, { HANDOFF_HOOK_CATCH_WAIT: "1" }));

// The user-scope script in a folder that is no repository, and in a repository without git-handoff.
const home = tempDir("handoff-bench-home-");
mkdirSync(join(home, "bin"));
const script = join(home, "agent-hook");
writeFileSync(script, USER_HOOK_SCRIPT);
chmodSync(script, 0o755);
const plainDir = tempDir();
const plainRepo = tempRepo();
const user = (cwd: string) => () => run(script, ["claude-pre-tool-use"], payload("a.ts"), cwd, { CLAUDE_PROJECT_DIR: cwd }).ms;
const outsideDir = interleave(ROUNDS, node, user(plainDir));
const outsideRepo = interleave(ROUNDS, node, user(plainRepo));

// The full hook's own work: HANDOFF_HOOK_PROFILE marks, in ms since the process started.
const own: number[] = [];
// The same span in CPU time (user + system, from the marks): a loaded machine inflates it less than the clock.
const ownCpu: number[] = [];
const loaded: number[] = [];
for (let i = 0; i < 15; i++) {
  for (const input of [WARN, DENY]) {
    const marks = new Map<string, number>();
    const cpu = new Map<string, number>();
    // The full hook itself (the fast path answers these now):
    for (const line of run(process.execPath, [CLI, "hook", "claude-pre-tool-use"], input, repo, { HANDOFF_HOOK_PROFILE: "1" }).stderr.split("\n")) {
      const m = /^git-handoff: profile (.+?)\s+([\d.]+) ms(?: \(cpu ([\d.]+) ms\))?$/.exec(line);
      if (m) marks.set(m[1]!, Number(m[2]));
      if (m?.[3]) cpu.set(m[1]!, Number(m[3]));
    }
    own.push(marks.get("answered")! - marks.get("stdin read")!);
    ownCpu.push(cpu.get("answered")! - cpu.get("stdin read")!);
    loaded.push(marks.get("answered")! - marks.get("bundle loaded")!);
  }
}
const n = median([free.a, warn.a, deny.a]);
console.log(
  `git-handoff-hook claude-pre-tool-use, 100 agents / 1,000 live leases, p50 vs node -e 0 (${fmt(n, 1)} ms):\n` +
    `  free file ${fmt(free.b, 1)} ms -> ${fmt(free.ratio)}x (goal <= 0.3x)\n` +
    `  warned edit ${fmt(warn.b, 1)} ms -> ${fmt(warn.ratio)}x, denied edit ${fmt(deny.b, 1)} ms -> ${fmt(deny.ratio)}x (goal <= 1.2x); ` +
    `denied, waiting for the catch record: ${fmt(waited.ratio)}x; denied by the full hook called directly: ${fmt(direct.ratio)}x\n` +
    `  user-scope hook outside a repository ${fmt(outsideDir.b, 1)} ms -> ${fmt(outsideDir.ratio)}x, in a repository without git-handoff ${fmt(outsideRepo.b, 1)} ms -> ${fmt(outsideRepo.ratio)}x (goal <= 0.1x)\n` +
    `  full hook's own work, stdin read to answer written: ${fmt(median(own), 1)} ms -> ${fmt(median(own) / n, 3)}x (goal < 0.1x); in CPU time ${fmt(median(ownCpu), 1)} ms; bundle loaded to answer: ${fmt(median(loaded), 1)} ms`,
);
// The full hooks the fast path started in the background may still be writing: let them finish.
await new Promise((r) => setTimeout(r, 3000));
cleanupTemp();
