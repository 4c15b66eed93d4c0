// One MCP server serves one agent over stdio. The session owns the Store the tools share, knows
// where the agent's identity came from, and re-checks what could go stale between calls.
import { statSync } from "node:fs";
import { join } from "node:path";
import { validateAgentId } from "../core/ids.ts";
import { CONFIG_NAME } from "../store/config-file.ts";
import type { Store } from "../store/store.ts";
import { detachedRunner, inProcessRunner, type Runner } from "../store/verification-runs.ts";
import { openSyncedStore } from "../sync/open.ts";

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
  private current: Store | null = null;
  private opening: Promise<Store> | null = null;
  private readonly retired = new Set<Store>();
  private stamp = "";
  private agentName: string | undefined;
  private source: AgentSource;

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
   * for writes, `git cat-file --batch` for packed objects). Refs and objects are read fresh by
   * every operation; what the Store caches at open (the checked-out branch, `.handoff.yaml` here
   * and as committed on the integration branch, the sync remote) is re-checked here with five
   * stats, and the Store is reopened when any changed, so no call acts on stale state.
   */
  async store(): Promise<Store> {
    const s = this.current;
    if (s && this.stampOf(s) === this.stamp) return s;
    // Concurrent calls share one reopen, so no Store (and its git processes) is left behind.
    this.opening ??= this.reopen().finally(() => (this.opening = null));
    return this.opening;
  }

  private async reopen(): Promise<Store> {
    const env = { ...(this.opts.env ?? process.env) };
    delete env.HANDOFF_AGENT; // the session decides the name; openStore derives one when we have none
    const next = await openSyncedStore({ cwd: this.opts.cwd, env, warm: true, ...(this.agentName !== undefined ? { agent: this.agentName } : {}) });
    const old = this.current;
    this.current = next;
    this.stamp = this.stampOf(next);
    if (old) this.retire(old);
    return next;
  }

  /** A call still waiting may hold the old Store: close it once no call can still be using it. */
  private retire(old: Store): void {
    this.retired.add(old);
    const timer = setTimeout(() => {
      this.retired.delete(old);
      old.close();
    }, this.waitBoundMs + 10_000);
    timer.unref();
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
      this.stamp = ""; // reopen with the new actor at the next store()
    }
    return true;
  }

  close(): void {
    this.current?.close();
    this.current = null;
    for (const old of this.retired) old.close();
    this.retired.clear();
  }

  private stampOf(s: Store): string {
    // .git/config too: the sync remote (origin, handoff.remote) is read once per Store. And the
    // integration branch's tip (its loose ref file, and packed-refs where it may be packed): the
    // policy in force is the .handoff.yaml committed there, so a policy change merged while the
    // server runs takes effect at the next call. A repack reopens the store once, harmlessly.
    const branch = s.policySource?.branch;
    const tip = branch ? `${readOr(join(s.repo.commonDir, "refs/heads", branch))}\0${readOr(join(s.repo.commonDir, "packed-refs"))}` : "";
    return `${readOr(join(s.repo.gitDir, "HEAD"))}\0${s.repo.workTree ? readOr(join(s.repo.workTree, CONFIG_NAME)) : ""}\0${readOr(join(s.repo.commonDir, "config"))}\0${tip}`;
  }
}

/**
 * What a file is now, without reading it: git and editors replace these files by rename (a new
 * inode) or rewrite them (a new size or modification time, kept in nanoseconds here).
 */
function readOr(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false, bigint: true });
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : "";
}
