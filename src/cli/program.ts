import { Command } from "commander";
import { registerAgents } from "./commands/agents.ts";
import { registerApprove } from "./commands/approve.ts";
import { registerClaim } from "./commands/claim.ts";
import { registerConflicts } from "./commands/conflicts.ts";
import { registerDepend } from "./commands/depend.ts";
import { registerEvents } from "./commands/events.ts";
import { registerHandoff } from "./commands/handoff.ts";
import { registerNegotiate } from "./commands/negotiate.ts";
import { registerInit } from "./commands/init.ts";
import { registerReview } from "./commands/review.ts";
import { registerSession } from "./commands/session.ts";
import { registerHook } from "./commands/hook.ts";
import { registerLease } from "./commands/lease.ts";
import { registerMcpCommand, registerMcpConfig } from "./commands/mcp-register.ts";
import { registerStats } from "./commands/stats.ts";
import { registerStatus } from "./commands/status.ts";
import { registerTask } from "./commands/task.ts";
import { registerDashboard } from "./commands/dashboard.ts";
import { registerDoctor, registerSync, registerSyncTools } from "./commands/sync.ts";
import { registerMemory } from "./commands/memory.ts";
import { registerDoc } from "./commands/doc.ts";
import { registerMeta, VERSION } from "./commands/meta.ts";
import { EXAMPLES } from "./examples.ts";
import { registerWait } from "./commands/wait.ts";
import { registerWorker } from "./commands/worker.ts";
import { registerTest } from "./commands/test-link.ts";
import { registerLoop } from "./commands/loop.ts";


type Register = (program: Command) => void;

/**
 * Every register function with the top-level verbs (and aliases) it adds, in help order. A one-shot
 * call registers only the function of its verb: building all ~100 commands with their options was
 * the largest part of a cold `claim` after Node's own start. A test checks this table against
 * what each function registers.
 */
export const VERBS: [Register, string[]][] = [
  [registerInit, ["init", "uninstall"]],
  [registerTask, ["task", "tasks"]],
  [registerClaim, ["claim", "renew", "release", "done", "fail", "reclaim", "cancel"]],
  [registerEvents, ["events"]],
  [registerStatus, ["status"]],
  [registerStats, ["stats"]],
  [registerSession, ["session", "heartbeat"]],
  [registerAgents, ["agents", "gc"]],
  [registerDepend, ["depend", "undepend", "ready"]],
  [registerHandoff, ["handoff", "inbox", "ack"]],
  [registerNegotiate, ["ask", "answer"]],
  [registerReview, ["review"]],
  [registerApprove, ["approve"]],
  [registerConflicts, ["conflicts", "merge-preview"]],
  [registerLease, ["lease", "unlease", "leases", "check"]],
  [registerHook, ["hook"]],
  [registerMcpCommand, ["mcp"]],
  [registerMcpConfig, ["mcp-config"]],
  [registerSync, ["remote", "sync", "sync-conflicts"]],
  [registerSyncTools, ["fence-check", "compact"]],
  [registerDoctor, ["doctor"]],
  [registerWait, ["wait"]],
  [registerWorker, ["worker"]],
  [registerTest, ["test"]],
  [registerLoop, ["loop"]],
  [registerMemory, ["memory"]],
  [registerDoc, ["doc"]],
  [registerMeta, ["version", "completion"]],
  [registerDashboard, ["dashboard"]],
];

/** Verbs that read the whole program (completion lists every verb): always built in full. */
const NEEDS_ALL = new Set(["completion", "help"]);
const TAKES_VALUE = new Set(["-C", "--agent"]);

/** The verb of a command line: its first word that is neither an option nor an option's value. */
export function verbOf(argv: string[]): string | undefined {
  return argv.find((a, i) => !a.startsWith("-") && !TAKES_VALUE.has(argv[i - 1] ?? ""));
}

/**
 * The program with every verb, or (given the command line) with only the verb it runs, when that
 * verb is known; unknown verbs, help and completion get every verb, so their answers list them all.
 */
export function buildProgram(argv?: string[]): Command {
  const program = new Command("git-handoff")
    .description("coordinate parallel coding agents through git refs (refs/handoff/*)")
    .version(VERSION)
    .option("-C <dir>", "run as if started in <dir>")
    .option("--agent <name>", "act as this agent (default: $HANDOFF_AGENT, else user@host[.worktree])")
    .option("--json", "print JSON")
    .option("--push", "send writes to the sync remote at once")
    .option("--offline", "grant exclusive operations tentatively when the sync remote is unreachable")
    .showHelpAfterError("(git handoff help <verb> shows how to use it)")
    // Options before the verb belong to the program, after it to the verb (each leaf repeats the
    // globals through withGlobals). Without this the program swallowed `events --agent NAME`, so
    // the filter was ignored and the name became the caller instead.
    .enablePositionalOptions()
    .exitOverride();
  const verb = argv ? verbOf(argv) : undefined;
  const only = verb !== undefined && !NEEDS_ALL.has(verb) ? VERBS.filter(([, names]) => names.includes(verb)) : [];
  for (const [register] of only.length ? only : VERBS) register(program);
  const paths = (c: Command, prefix: string[]): void => {
    for (const sub of c.commands) {
      sub.exitOverride();
      const path = [...prefix, sub.name()];
      const examples = EXAMPLES[path.join(" ")];
      if (examples && !sub.commands.length) sub.addHelpText("after", `\nExamples:\n${examples.map((e) => `  ${e}`).join("\n")}`);
      paths(sub, path);
    }
  };
  paths(program, []);
  return program;
}
