import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { childProcess } from "./builtins.ts";
import { envFor, firstLine, placeOf, setAlive, toolIdentityEnv } from "./run.ts";
import { classifyUpdateFailure, transactionScript, type RefUpdate, type TransactionResult } from "./refs.ts";

/**
 * A long-lived `git update-ref --stdin` for long-running processes (MCP server, benchmarks): one
 * transaction after another in the same process, ~1 ms a write instead of a spawn. A failed
 * transaction makes git (2.39) exit, so a spare process is kept started ahead: the next
 * transaction goes to it at once and a new spare starts off the critical path.
 */
export class RefSession {
  private child: ChildProcessWithoutNullStreams | null = null;
  private spare: ChildProcessWithoutNullStreams | null = null;
  private out = "";
  private err = "";
  private waiter: ((r: TransactionResult | Error) => void) | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly cwd: string,
    private readonly zeroOid: string,
    private readonly agent: string,
  ) {}

  update(updates: RefUpdate[]): Promise<TransactionResult> {
    const run = this.queue.then(() => this.transact(updates));
    this.queue = run.catch(() => {});
    return run;
  }

  private start(): ChildProcessWithoutNullStreams {
    const child = childProcess().spawn("git", ["update-ref", "--stdin"], {
      cwd: placeOf(this.cwd),
      stdio: ["pipe", "pipe", "pipe"],
      env: envFor({ cwd: this.cwd, env: toolIdentityEnv(this.agent) }),
    });
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    // Only the active child answers the waiter; a spare that dies unused is just dropped.
    child.stdout.on("data", (s: string) => {
      if (this.child !== child) return;
      this.out += s;
      if (/^commit: ok$/m.test(this.out)) this.settle({ ok: true });
    });
    child.stderr.on("data", (s: string) => {
      if (this.child === child) this.err += s;
    });
    child.stdin.on("error", () => {});
    const exited = () => {
      if (this.spare === child) this.spare = null;
      if (this.child !== child) return;
      this.child = null;
      const message = firstLine(this.err) || "git update-ref exited";
      this.settle(classifyUpdateFailure(this.err, message) ?? new Error(`git update-ref failed: ${message}`));
      this.prepareSpare();
    };
    child.on("close", exited);
    child.on("error", (e) => {
      if (this.spare === child) this.spare = null;
      if (this.child === child) this.settle(e);
    });
    setAlive(child, false);
    return child;
  }

  /** Starts the next process now, so a transaction after a failed one does not wait for git to start. */
  private prepareSpare(): void {
    setImmediate(() => {
      if (!this.closed && !this.spare) this.spare = this.start();
    });
  }

  private settle(r: TransactionResult | Error): void {
    const w = this.waiter;
    this.waiter = null;
    if (this.child) setAlive(this.child, false);
    w?.(r);
  }

  private transact(updates: RefUpdate[]): Promise<TransactionResult> {
    if (!this.child) {
      this.child = this.spare ?? this.start();
      this.spare = null;
      this.prepareSpare();
    }
    this.out = "";
    this.err = "";
    return new Promise((resolve, reject) => {
      this.waiter = (r) => (r instanceof Error ? reject(r) : resolve(r));
      setAlive(this.child!, true);
      this.child!.stdin.write(transactionScript(updates, this.zeroOid));
    });
  }

  close(): void {
    this.closed = true;
    this.child?.stdin.end();
    this.spare?.stdin.end();
    this.child = null;
    this.spare = null;
  }
}
