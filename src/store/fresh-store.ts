// A Store for a long-running front end (the MCP server, the dashboard, the worker): refs and
// objects are read fresh by every operation, but what a Store takes in at open (the checked-out
// branch, the policy from `.handoff.yaml` here and as committed on the integration branch, the
// repository's git config) is checked again at every `get()` with a few stats, and the Store is
// reopened when any of it changed, so no call acts on stale state.
import { join } from "node:path";
import { fileStamp } from "../git/file-stamp.ts";
import { hasSeparateStore } from "../git/repo.ts";
import { CONFIG_NAME } from "./config-file.ts";
import type { Store } from "./store.ts";

export class FreshStore {
  private current: Store | null = null;
  private opening: Promise<Store> | null = null;
  private readonly retired = new Set<Store>();
  private stamp = "";

  /**
   * `open` makes a new Store; `keepRetiredMs`: how long a replaced Store stays open for calls that
   * may still hold it (the longest a call can run).
   */
  constructor(
    private readonly open: () => Promise<Store>,
    private readonly keepRetiredMs: number,
    /** How long after a check sameAsLast() trusts it: one request's call and its heartbeat. */
    private readonly sameCallMs = 1000,
  ) {}

  async get(): Promise<Store> {
    const s = this.current;
    if (s && (await stampOf(s)) === this.stamp) {
      this.checkedAt = Date.now();
      return s;
    }
    // Concurrent calls share one reopen, so no Store (and its git processes) is left behind.
    this.opening ??= this.reopen().finally(() => (this.opening = null));
    return this.opening;
  }

  /**
   * As `get()`, but when a new Store cannot be opened (a malformed policy committed meanwhile) the
   * one in use, kept open until one opens: for finishing what was started under it (a worker's
   * task whose output would otherwise be lost). New work should use `get()` and report the error.
   */
  async getOrCurrent(): Promise<Store> {
    try {
      return await this.get();
    } catch (e) {
      if (this.current) return this.current;
      throw e;
    }
  }

  /** The Store in use, without checking it (explaining a failure of a call that used it). */
  peek(): Store | null {
    return this.current;
  }

  /**
   * The Store the last `get()` returned, without checking it again, if that check was a moment ago
   * (within `sameCallMs`) and nothing invalidated it since: for what follows a call in the same
   * request (its heartbeat). Otherwise (a call that never asked for the Store, or a long one) `get()`.
   */
  async sameAsLast(): Promise<Store> {
    return this.current && this.stamp !== "" && Date.now() - this.checkedAt < this.sameCallMs ? this.current : this.get();
  }

  /** When the last `get()` found the Store current (epoch ms). */
  private checkedAt = 0;

  /** The next `get()` opens a new Store (the caller changed what `open` does). */
  invalidate(): void {
    this.stamp = "";
  }

  close(): void {
    this.current?.close();
    this.current = null;
    for (const old of this.retired) old.close();
    this.retired.clear();
  }

  private async reopen(): Promise<Store> {
    const next = await this.open();
    const old = this.current;
    this.current = next;
    this.stamp = await stampOf(next);
    this.checkedAt = Date.now();
    if (old) this.retire(old);
    return next;
  }

  /** A call still running may hold the old Store: close it once no call can still be using it. */
  private retire(old: Store): void {
    this.retired.add(old);
    const timer = setTimeout(() => {
      this.retired.delete(old);
      old.close();
    }, this.keepRetiredMs);
    timer.unref();
  }
}

/**
 * What the Store took in at open: HEAD (the checked-out branch), this worktree's `.handoff.yaml`
 * and `.git/config` (the sync remote, the integration branch's name) as file identities, where the
 * coordination refs live (the repository or a separate store), and the
 * integration branch's tip, whose committed `.handoff.yaml` is the policy in force, by value (read
 * in-process from the ref files: a `git pack-refs` moves it without changing it). On another ref
 * backend the tip is not followed (reading it would start git at every call).
 */
async function stampOf(s: Store): Promise<string> {
  const branch = s.policySource?.branch;
  const tip = branch && s.usesRefFiles ? ((await s.readRef(`refs/heads/${branch}`)) ?? "none") : "";
  // Where the coordination refs live (separate-store.ts): a move reopens the Store, which then reads the new place.
  const layout = hasSeparateStore(s.repo.commonDir) ? "separate" : "shared";
  return `${fileStamp(join(s.repo.gitDir, "HEAD"))}\0${s.repo.workTree ? fileStamp(join(s.repo.workTree, CONFIG_NAME)) : ""}\0${fileStamp(join(s.repo.commonDir, "config"))}\0${tip}\0${layout}`;
}
