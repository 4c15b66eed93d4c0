import type { Command } from "commander";
import { buildFrom, verbOf } from "./program-builder.ts";
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
import { registerMeta } from "./commands/meta.ts";
import { registerWait } from "./commands/wait.ts";
import { registerWorker } from "./commands/worker.ts";
import { registerTest } from "./commands/test-link.ts";
import { registerLoop } from "./commands/loop.ts";
import { registerStoreLayout } from "./commands/store-layout.ts";

import type { Register } from "./program-builder.ts";

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
  [registerStoreLayout, ["store"]],
  [registerMemory, ["memory"]],
  [registerDoc, ["doc"]],
  [registerMeta, ["version", "completion"]],
  [registerDashboard, ["dashboard"]],
];

export { verbOf };

/**
 * The program with every verb, or (given the command line) with only the verb it runs, when that
 * verb is known; unknown verbs, help and completion get every verb, so their answers list them all.
 */
export function buildProgram(argv?: string[]): Command {
  return buildFrom(VERBS, argv);
}
