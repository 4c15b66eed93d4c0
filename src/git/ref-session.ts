import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { childProcess } from "./builtins.ts";
import { firstLine, setAlive, toolIdentityEnv } from "./run.ts";
import { classifyUpdateFailure, transactionScript, type RefUpdate, type TransactionResult } from "./refs.ts";

/**
 * A long-lived `git update-ref --stdin` for long-running processes (MCP server, benchmarks): one
 * transaction after another in the same process, ~1 ms a write instead of a spawn. A failed
 * transaction makes git exit; the next call starts a fresh session.
 */
export class RefSession {
  private child: ChildProcessWithoutNullStreams | null = null;
  private out = "";
  private err = "";
  private waiter: ((r: TransactionResult | Error) => void) | null = null;
  private queue: Promise<unknown> = Promise.resolve();

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
      cwd: this.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, GIT_DIR: undefined, GIT_WORK_TREE: undefined, GIT_INDEX_FILE: undefined, ...toolIdentityEnv(this.agent) },
    });
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (s: string) => {
      this.out += s;
      if (/^commit: ok$/m.test(this.out)) this.settle({ ok: true });
    });
    child.stderr.on("data", (s: string) => (this.err += s));
    child.stdin.on("error", () => {});
    const exited = () => {
      if (this.child === child) this.child = null;
      const message = firstLine(this.err) || "git update-ref exited";
      this.settle(classifyUpdateFailure(this.err, message) ?? new Error(`git update-ref failed: ${message}`));
    };
    child.on("close", exited);
    child.on("error", (e) => this.settle(e));
    setAlive(child, false);
    return child;
  }

  private settle(r: TransactionResult | Error): void {
    const w = this.waiter;
    this.waiter = null;
    if (this.child) setAlive(this.child, false);
    w?.(r);
  }

  private transact(updates: RefUpdate[]): Promise<TransactionResult> {
    this.child ??= this.start();
    this.out = "";
    this.err = "";
    return new Promise((resolve, reject) => {
      this.waiter = (r) => (r instanceof Error ? reject(r) : resolve(r));
      setAlive(this.child!, true);
      this.child!.stdin.write(transactionScript(updates, this.zeroOid));
    });
  }

  close(): void {
    this.child?.stdin.end();
    this.child = null;
  }
}
