// One MCP server serves one agent over stdio. The session owns the Store the tools share, knows
// where the agent's identity came from, and re-checks what could go stale between calls.
import { validateAgentId } from "../core/ids.ts";
import { QuietTrigger } from "../git/quiet-trigger.ts";
import { FreshStore } from "../store/fresh-store.ts";
import { loadLeases } from "../store/lease-store.ts";
import { storedClaimedTasks } from "../store/task-listing.ts";
import type { Store } from "../store/store.ts";
import { detachedRunner, inProcessRunner, type Runner } from "../store/verification-runs.ts";
import { openSyncedStore } from "../sync/open.ts";
import { flushPending } from "../sync/pending-push.ts";

/** Where the agent name came from, strongest first. */
export type AgentSource = "flag" | "env" | "load_context" | "derived";

export interface SessionOptions {
  cwd: string;
  /** `--agent` on the server's command line. */
  agent?: string;
  env?: NodeJS.ProcessEnv;
  /** Longest a wait_task / watch call blocks before returning so the agent calls again. */
  waitBoundMs?: number;
  /** How often a waiting call re-reads state. */
  pollMs?: number;
  /**
   * How to start a detached verification runner: `node <runnerEntry...> --verify-job JSON`. Without
   * it (tests in-process) a verification runs inside the server and ends with it.
   */
  runnerEntry?: string[];
}

export const DEFAULT_WAIT_BOUND_MS = 50_000;
export const DEFAULT_POLL_MS = 250;

export class McpSession {
  readonly waitBoundMs: number;
  readonly pollMs: number;
  private readonly fresh: FreshStore;
  private agentName: string | undefined;
  private source: AgentSource;
  private readonly stopper = new AbortController();

  private constructor(private readonly opts: SessionOptions) {
    this.waitBoundMs = opts.waitBoundMs ?? DEFAULT_WAIT_BOUND_MS;
    this.pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
    const env = opts.env ?? process.env;
    if (opts.agent !== undefined) {
      this.agentName = validateAgentId(opts.agent);
      this.source = "flag";
    } else if (env.HANDOFF_AGENT) {
      this.agentName = validateAgentId(env.HANDOFF_AGENT);
      this.source = "env";
    } else {
      this.source = "derived";
    }
    // A call still waiting may hold a replaced Store: it stays open past the longest wait.
    this.fresh = new FreshStore(() => this.openStore(), this.waitBoundMs + 10_000);
  }

  /** Opens the repository once, so a server outside a repository fails at start, not at the first call. */
  static async open(opts: SessionOptions): Promise<McpSession> {
    const session = new McpSession(opts);
    await session.store();
    return session;
  }

  get agentSource(): AgentSource {
    return this.source;
  }

  /**
   * The Store for this call: warm (refs read in-process, one long-lived `git update-ref --stdin`
   * for writes, `git cat-file --batch` for packed objects), reopened when what it took in at open
   * changed (fresh-store.ts).
   */
  store(): Promise<Store> {
    return this.fresh.get();
  }

  /** The Store this request's call just used (FreshStore.sameAsLast): its heartbeat's, checked once per request. */
  storeOfCall(): Promise<Store> {
    return this.fresh.sameAsLast();
  }

  /** A failed call's error, told as a move of the coordination refs where that caused it (Store.explainFailure). */
  explainFailure(e: unknown): unknown {
    return this.fresh.peek()?.explainFailure(e) ?? e;
  }

  private openStore(): Promise<Store> {
    const env = { ...(this.opts.env ?? process.env) };
    delete env.HANDOFF_AGENT; // the session decides the name; openStore derives one when we have none
    return openSyncedStore({ cwd: this.opts.cwd, env, warm: true, ...(this.agentName !== undefined ? { agent: this.agentName } : {}) });
  }

  /** Where complete_task's verifications run: a detached process that outlives a cancelled call. */
  runner(store: Store): Runner {
    return this.opts.runnerEntry ? detachedRunner(this.opts.runnerEntry, this.opts.env ?? process.env) : inProcessRunner(store);
  }

  /**
   * load_context may name the agent when the client config did not (--agent / HANDOFF_AGENT win:
   * they are the operator's choice). Returns whether the name was taken.
   */
  async adoptAgent(name: string): Promise<boolean> {
    validateAgentId(name);
    if (this.source === "flag" || this.source === "env") return name === this.agentName;
    if (name !== this.agentName) {
      this.agentName = name;
      this.source = "load_context";
      this.fresh.invalidate(); // reopen with the new actor at the next store()
    }
    return true;
  }

  /**
   * Once the server is quiet after its last call (quiet-trigger.ts): the task listing and the lease
   * set are read, so what the calls moved (and what other processes moved meanwhile) is learnt
   * between requests, not at the start of the next one, whose first reads (a claim's capacity
   * check, its lease decision) are these. Never while a call runs: a claim waiting for its turn
   * at the lease ref would then read a lease set that its own read, once it has the turn, reads
   * again. The reads only fill what later reads would fill; a failure is left for the next call
   * to meet and report.
   */
  private readonly readAhead = new QuietTrigger(() => {
    const store = this.fresh.peek();
    if (!store || this.calls > 0 || this.stopper.signal.aborted) return;
    Promise.all([storedClaimedTasks(store), loadLeases(store)]).catch(() => {});
  });
  /** Tool calls under way (tool.ts). */
  private calls = 0;

  /** A tool call has started. */
  callStarted(): void {
    this.calls++;
    this.readAhead.cancel();
  }

  /** A tool call has been answered. */
  callEnded(): void {
    this.calls--;
    if (this.calls === 0 && !this.stopper.signal.aborted) this.readAhead.poke();
  }

  /** Aborted when the server is asked to stop: a blocking call answers with what it saw so far. */
  get stopping(): AbortSignal {
    return this.stopper.signal;
  }

  stop(): void {
    this.readAhead.cancel();
    this.stopper.abort();
  }

  /**
   * Pushes the writes queued for the push budget (a renewal, a heartbeat: pending-push.ts) now:
   * the timer that would have sent them dies with the process, and until the clone's next push
   * other machines would see a lease about to run out.
   */
  async flushQueued(): Promise<void> {
    const store = this.fresh.peek();
    const remote = store && !store.syncOptions.offline ? await store.syncRemote() : null;
    if (store && remote) await flushPending(store, remote, { urgent: true });
  }

  close(): void {
    this.readAhead.cancel();
    this.fresh.close();
  }
}
