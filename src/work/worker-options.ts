// What a worker is told when it starts (the CLI's `worker` options) and what it says when it
// stops: shared by the loop (worker.ts), its claims (worker-claims.ts) and each task's run
// (worker-task.ts).
import type { AgentSetup } from "./agent-command.ts";

export interface WorkerOptions {
  /** The local user's command line; ignored when `agent` says which client does each task. */
  command: string;
  /** `--with claude|codex`: the client run on each task, its prompt built by agent-command.ts. */
  agent?: AgentSetup;
  once: boolean;
  concurrency: number;
  pollMs: number;
  keep: boolean;
  /** Code changes go back as the branch handoff/<id> on the sync remote. */
  pushBranch?: boolean;
  /** `--addressed-only`: tasks addressed to anyone are left to others. */
  addressedOnly?: boolean;
  ttl?: string;
  /** Aborted on Ctrl-C: running commands stop and their tasks are released. */
  signal: AbortSignal;
  log: (line: string) => void;
  stderr: (chunk: Buffer) => void;
}

export interface WorkerSummary {
  done: number;
  /** Verified and sent to review (a task with a verify command). */
  review: number;
  failed: number;
  cancelled: number;
  released: number;
  /**
   * `once`: it took nothing, and stopped instead of waiting, because the only ready tasks it could
   * take have a verify command nobody approved in this clone (their ids). A person must approve.
   */
  heldForApproval?: string[];
}
