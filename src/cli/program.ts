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


export function buildProgram(): Command {
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
  registerInit(program);
  registerTask(program);
  registerClaim(program);
  registerEvents(program);
  registerStatus(program);
  registerStats(program);
  registerSession(program);
  registerAgents(program);
  registerDepend(program);
  registerHandoff(program);
  registerNegotiate(program);
  registerReview(program);
  registerApprove(program);
  registerConflicts(program);
  registerLease(program);
  registerHook(program);
  registerMcpCommand(program);
  registerMcpConfig(program);
  registerSync(program);
  registerSyncTools(program);
  registerDoctor(program);
  registerWait(program);
  registerWorker(program);
  registerMemory(program);
  registerDoc(program);
  registerMeta(program);
  registerDashboard(program);
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
