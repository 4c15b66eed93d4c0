import { existsSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { Config } from "../core/config.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { deriveScope, type Actor } from "../core/identity.ts";
import { refComponentProblem, sanitizeIdPart, validateAgentId } from "../core/ids.ts";
import { ObjectReader } from "../git/object-reader.ts";
import { ObjectWriter } from "../git/object-writer.ts";
import { discoverRepo, hasSeparateStore, SEPARATE_STORE, type RepoInfo } from "../git/repo.ts";
import { RefFiles } from "../git/ref-files.ts";
import { recordedLooseRefs, taskRefRecordPath } from "./task-ref-record.ts";
import { RefSession } from "../git/ref-session.ts";
import { LooseRefWriter, type RefWritePolicy } from "../git/loose-ref-writer.ts";
import { looseObjectPath } from "../git/loose-object.ts";
import { WriteTurns } from "../git/write-turn.ts";
import type { OwnerFile } from "../git/owned-lock.ts";
import { stateFolderProblem } from "../git/safe-file.ts";
import { thisHost } from "../git/host-name.ts";
import { loginName } from "../git/login-name.ts";
import { runStoreFrom } from "../git/run.ts";
import { listRefs, readRef, updateRefs, type RefTip, type RefUpdate, type TransactionResult } from "../git/refs.ts";
import type * as z from "zod/mini";
import { readRecord } from "./codec.ts";
import { RecordCache, tasksCacheFile } from "./record-cache.ts";
import { ServerRecords, serverRecordsFile } from "./server-records.ts";
import { noteLandedTask } from "./claimed-index-file.ts";
import type { Task } from "../core/task.ts";
import type { OpContext } from "../core/task-ops.ts";
import { ConfigRead } from "../git/config-read.ts";
import { repoSharedPerm, scanConfig, scanRefWritePolicy } from "../git/config-scan.ts";
import { applySharedUmask } from "../git/shared-perm.ts";
import type { PathRemoteSource } from "../git/path-remote.ts";
import { configFileStamp } from "../git/config.ts";
import { RecordCacheFile } from "./record-cache-file.ts";
import { loadRepositoryConfig, type PolicySource } from "./repo-policy.ts";
import { failOnLingeringLock, failOnStaleLock } from "./stale-lock.ts";
import { restingOn } from "./rests-on.ts";

export const REF_ROOT = "refs/handoff/";
/** Where each task's ref is, `refs/handoff/tasks/<id>` (task-store.ts). */
export const TASKS_PREFIX = `${REF_ROOT}tasks/`;

/** `keep: false`: a one-shot listing about to move a task ref reads the record of the loose task refs but writes none (task-ref-record.ts). */
export interface ListingRecord {
  keep?: boolean;
}

export interface OpenOptions {
  cwd: string;
  agent?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * For long-running processes (MCP server, dashboard, benchmarks): keep a `git update-ref --stdin`
   * session open instead of spawning git for every write.
   */
  warm?: boolean;
  push?: boolean;
  offline?: boolean;
}

/** A repository opened for coordination: where it is, who is acting, the policy and the clock. */
export class Store {
  readonly reader: ObjectReader;
  readonly writer: ObjectWriter;
  readonly zeroOid: string;
  readonly oidBytes: number;
  private readonly refFiles: RefFiles | null;
  /** The user's refs (branches, HEAD's): the same files as refFiles unless the store is separate. */
  private readonly codeRefFiles: RefFiles | null;
  private readonly session: RefSession | null;
  /** Plain ref updates written in-process through git's lock protocol (long-running processes). */
  private looseRefs: LooseRefWriter | null = null;
  private closed = false;
  /** Turns at exclusive writes shared with the other long-running processes here (write-turn.ts). */
  private readonly turns: WriteTurns | null;
  /** Decoded records by commit id. A commit never changes, so entries never go stale. */
  private readonly records = new Map<string, unknown>();
  /** Records kept between one-shot commands (record-cache-file.ts), for the views that opt in. */
  private diskRecords: RecordCacheFile | null = null;
  /** Task records every one-shot process keeps between runs (record-cache.ts). */
  private taskCache: RecordCache | null = null;
  /** Task records this clone's other long-running servers wrote (server-records.ts); a long-running process's only. */
  private serverRecords: ServerRecords | null = null;
  /** Answers keyed by immutable content kept by a long-running view across its Stores (keepAnswersIn). */
  private answers: Map<string, unknown> | null = null;
  /** How writes use the sync remote: `push` sends every write at once, `offline` allows tentative grants. */
  syncOptions: { push: boolean; offline: boolean } = { push: false, offline: false };
  /** Things the front end should tell the user after the command (e.g. a tentative grant). */
  readonly notices: string[] = [];
  /**
   * Where a front end with a person or agent watching it (the CLI) is told, while the command
   * runs, that it waits on a lock past a second (a claim waiting for the agent's capacity turn).
   */
  onWait: ((message: string) => void) | undefined = undefined;
  private remoteName: Promise<string | null> | undefined;
  /** .git/config as it was when remoteName was read (configFileStamp). */
  private remoteStamp = "";
  /**
   * How exclusive writes reach the sync remote. The store knows nothing about other clones: the
   * sync layer (src/sync/open.ts) hands this in when it opens a store for a front end.
   */
  remoteGate: RemoteGate | null = null;
  /**
   * How long past its expiry another agent's claim or lease still counts as held here. The sync
   * layer sets it before exclusive writes through a remote (max_clock_skew plus this clock's offset).
   */
  takeoverGraceMs = 0;
  /** Where the policy in force comes from (repo-policy.ts); null for a store opened on a given config. */
  policySource: PolicySource | null = null;
  /** git's config files as a one-shot store's opening read them (configRead); null in a long-running one. */
  private openRead: ConfigRead | null;

  constructor(
    readonly repo: RepoInfo,
    readonly actor: Actor,
    readonly config: Config,
    private readonly clock: () => Date,
    /**
     * What openStore read of git's configuration: the one-shot ref write policy (null: ask git),
     * core.sharedRepository, and the files themselves as that opening read them (config-read.ts).
     */
    opts: { warm: boolean; policy: RefWritePolicy | null; shared: number; read?: ConfigRead },
  ) {
    const storeDir = repo.storeDir;
    this.openRead = opts.warm ? null : (opts.read ?? null);
    this.reader = new ObjectReader(storeDir, this.storeCwd);
    // A one-shot writer asks whether to flush objects of the opening's read of the config.
    this.writer = new ObjectWriter(storeDir, repo.objectFormat, storeIncludes(repo), this.openRead);
    this.reader.recent = (oid) => this.writer.recentObject(oid);
    this.oidBytes = repo.objectFormat === "sha256" ? 32 : 20;
    this.zeroOid = "0".repeat(this.oidBytes * 2);
    this.refFiles = RefFiles.usable(storeDir, opts.read) ? new RefFiles(storeDir) : null;
    this.codeRefFiles = storeDir === repo.commonDir ? this.refFiles : RefFiles.usable(repo.commonDir, opts.read) ? new RefFiles(repo.commonDir) : null;
    this.session = opts.warm ? new RefSession(this.storeCwd, this.zeroOid, actor.agent) : null;
    this.turns = opts.warm && this.refFiles ? new WriteTurns(`${repo.commonDir}/handoff/turns`) : null;
    if (storeDir !== repo.commonDir) runStoreFrom(storeDir, this.cwd);
    const refFiles = this.refFiles;
    // One-shot: git's configuration from its files, when they are plain (config-scan.ts).
    if (!opts.warm && refFiles) this.looseRefs = LooseRefWriter.oneShot(storeDir, () => opts.policy, refFiles);
    // A shared repository's objects and fan-out folders get git's modes (shared-perm.ts).
    this.writer.knowShared(opts.shared);
    if (opts.warm) this.writer.prepareAhead();
    if (opts.warm && refFiles) {
      // Until git's configuration has been read, writes go to git.
      void LooseRefWriter.open(this.storeCwd, storeDir, storeDir === repo.commonDir ? repo.workTree : null, refFiles)
        .then((w) => {
          if (this.closed) w?.close();
          else (this.looseRefs = w)?.prepareAhead();
        })
        .catch(() => {});
    }
  }

  /** A long-running process (`warm`): it keeps state in process rather than in on-disk caches. */
  get warm(): boolean {
    return this.session !== null;
  }

  /**
   * The loose ref files under refs/handoff/ as a read just counted them (the event index's stamp,
   * event-index.ts readIndexHead), for the count a view makes before it packs (pack-refs.ts); null:
   * not counted.
   */
  looseHandoffCounted: number | null = null;

  /** The most loose ref files one listing of this store read (0 when refs are not read from files). */
  get looseRefsListed(): number {
    return this.refFiles?.looseListed ?? 0;
  }

  /** Refs are read from files in-process (not through git): a watcher can stat them. */
  get usesRefFiles(): boolean {
    return this.refFiles !== null;
  }

  /**
   * The value of one ref, or null. Always read fresh: other processes write concurrently. The
   * coordination refs are read from the store, any other (a branch) from the user's refs.
   */
  async readRef(name: string): Promise<string | null> {
    if (this.separateStore && !isStoreRef(name)) return this.codeRefFiles ? this.codeRefFiles.read(name) : readRef(this.cwd, name);
    const oid = this.refFiles ? this.refFiles.read(name) : await readRef(this.storeCwd, name);
    if (oid === null && isStoreRef(name)) this.refuseIfStoreMissing();
    return oid;
  }

  /** Every ref under a prefix such as `refs/handoff/tasks/`, sorted by name. */
  async listRefs(prefix: string, opts: ListingRecord = {}): Promise<RefTip[]> {
    if (this.separateStore && !isStoreRef(prefix)) return this.codeRefFiles ? this.codeRefFiles.list(prefix) : listRefs(this.cwd, prefix);
    if (this.session) this.refuseIfMoved();
    if (this.refFiles && this.session) {
      // Long-running: let the watch events already queued arrive first (ref-watch.ts).
      await new Promise((r) => setImmediate(r));
      return this.emptyChecked(this.refFiles.listFollowed(prefix));
    }
    return this.emptyChecked(this.refFiles ? this.refFiles.list(prefix, this.recordedLoose(prefix, opts)) : await listRefs(this.storeCwd, prefix));
  }

  /**
   * A one-shot listing's loose task refs from the record of their folders while it stands
   * (task-ref-record.ts); undefined for other prefixes (read as they are).
   */
  private recordedLoose(prefix: string, opts: ListingRecord): Map<string, string> | undefined {
    if (prefix !== TASKS_PREFIX || !this.refFiles) return undefined;
    const refFiles = this.refFiles;
    return recordedLooseRefs(taskRefRecordPath(this.repo.commonDir), this.repo.storeDir, prefix, () => refFiles.looseUnder(prefix), opts.keep ?? true);
  }

  /**
   * Whether any ref is under `prefix`, read now without a turn of the event loop (listRefs gives a
   * long-running process one, so watch events already queued arrive first); null where refs are
   * not read from files here. For a check made on every write (newer-refs.ts): a turn between a
   * writer's decision and its write lets the other writers of a racing process in first.
   */
  anyRefUnder(prefix: string): boolean | null {
    if (!this.refFiles || (this.separateStore && !isStoreRef(prefix))) return null;
    return this.refFiles.list(prefix).length > 0;
  }

  /** Asked once per store (a move after that is refuseIfMoved's to see). */
  private storeMissing: boolean | undefined;

  private emptyChecked(tips: RefTip[]): RefTip[] {
    if (!tips.length) this.refuseIfStoreMissing();
    return tips;
  }

  /**
   * RefFiles.stamp of these prefixes; null where refs are not read from files here. Read from the
   * files even in a long-running process: its ref session's writes are on disk when they return.
   */
  refStamp(prefixes: string[]): string | null {
    return this.refFiles ? this.refFiles.stamp(prefixes) : null;
  }

  /** The folder RefFiles reads refs from (refStamp's), or null where refs are not read from files here. */
  refFilesDir(): string | null {
    return this.refFiles ? this.repo.storeDir : null;
  }

  /**
   * listRefs of a one-shot process where refs are files, with RefFiles' stamp of exactly what it
   * read (`stamp` of the same prefix equals it while nothing moved); null elsewhere.
   */
  listRefsStamped(prefix: string): { tips: RefTip[]; stamp: string } | null {
    if (!this.refFiles || this.session || (this.separateStore && !isStoreRef(prefix))) return null;
    const { lists, stamp } = this.refFiles.listStamped([prefix], []);
    return { tips: this.emptyChecked(lists[0]!), stamp };
  }

  /**
   * A one-shot listing in its loose and packed parts (ref-files.ts `listParts`; the loose task refs
   * as recorded while their folders stand: recordedLoose), or null where refs are not read from
   * files here (another backend) or are followed by a watch (long-running).
   */
  listRefParts(prefix: string, opts: ListingRecord = {}): ReturnType<RefFiles["listParts"]> | null {
    return this.refFiles && !this.session ? this.refFiles.listParts(prefix, this.recordedLoose(prefix, opts)) : null;
  }

  /**
   * The record `file` stored at commit `oid` of `ref`, decoded and validated once per process:
   * long-running servers list hundreds of tasks per call, most unchanged since the last one.
   * Records are shared: callers must not mutate them (core operations build new ones).
   */
  async record<T>(ref: string, oid: string, file: string, schema: z.ZodMiniType<T>): Promise<T> {
    const key = `${file}:${oid}`;
    if (this.records.has(key)) return this.records.get(key) as T;
    // One-shot processes keep decoded task records on disk between runs (record-cache.ts); the
    // views that opt in (keepRecords) keep the others too (record-cache-file.ts).
    const disk = file === "task.json" && !this.session ? this.diskTasks() : null;
    const cached = disk ? disk.get(oid) : file === "task.json" && this.session ? this.sharedTasks().get(oid) : this.diskRecords?.get(key);
    if (cached !== undefined) {
      this.records.set(key, cached);
      return cached as T;
    }
    const { record, foreign } = await readRecord(this.reader, this.oidBytes, oid, ref, file, schema);
    // A record in a format this build does not know is read from git each time, so every process says so.
    if (!foreign) {
      if (disk) disk.put(oid, record);
      else this.diskRecords?.set(key, record);
    }
    if (this.records.size >= RECORD_CACHE_LIMIT) this.records.clear();
    this.records.set(key, record);
    return record;
  }

  /** A one-shot process about to read `n` task records (a whole listing, or a few): see RecordCache.expect. */
  expectTaskRecords(n: number): void {
    if (!this.session) this.diskTasks().expect(n);
  }

  /**
   * A record this process just wrote at commit `oid` (codec.ts writeSteps): this process, and for
   * tasks the one-shot processes after it (tasks.cache), read it without reading it back. The
   * record is the one the core operation built, which is what a read of that commit gives (the
   * schemas have no defaults or transforms). On disk it names its commit, tree and blob: until a
   * ref points at them a prune may remove them (prune-repair.test.ts), so a later process uses the
   * line only while they are there (record-cache.ts). A write that loses its race leaves a line
   * nobody asks for.
   */
  wroteRecord(file: string, oid: string, record: unknown, objects: string[]): void {
    if (this.records.size >= RECORD_CACHE_LIMIT) this.records.clear();
    this.records.set(`${file}:${oid}`, record);
    // For the other servers of this clone, while it races them (a lone server's line helps nobody).
    if (file === "task.json" && this.session && Date.now() < this.contendedUntil) this.sharedTasks().note(oid, record);
    if (file === "task.json" && !this.session) {
      this.diskTasks().note(oid, record, objects);
      // The claimed index's line for it, once its ref update has landed (claimed-index-file.ts).
      this.whenLanded(oid, (ref) => {
        if (ref.startsWith(TASKS_PREFIX)) noteLandedTask(this.repo.commonDir, ref, oid, record as Task);
      });
    }
  }

  /** Work to do once a commit this process wrote is a ref's value (updateRefs), by commit. */
  private readonly landedWork = new Map<string, ((ref: string) => void)[]>();

  /**
   * Runs `fn` with the ref's name once a transaction of this process sets a ref to `oid` and the
   * objects written for it are checked (best effort: a failure is only a cache not written); with
   * each ref's name where one transaction sets several to it (a ref and its tracking ref). A commit
   * that never lands (a lost race) never runs it.
   */
  whenLanded(oid: string, fn: (ref: string) => void): void {
    if (this.landedWork.size >= RECORD_CACHE_LIMIT) this.landedWork.clear();
    const work = this.landedWork.get(oid);
    if (work) work.push(fn);
    else this.landedWork.set(oid, [fn]);
  }

  private sharedTasks(): ServerRecords {
    return (this.serverRecords ??= new ServerRecords(serverRecordsFile(this.repo.commonDir)));
  }

  private diskTasks(): RecordCache {
    return (this.taskCache ??= new RecordCache(tasksCacheFile(this.repo.commonDir), (oids) => this.hasLooseObjects(oids)));
  }

  /** Whether every one of `oids` is a loose object here (a stat each; packed ones count as absent). */
  hasLooseObjects(oids: string[]): boolean {
    return oids.every((o) => existsSync(looseObjectPath(this.repo.storeDir, o)));
  }

  /**
   * One all-or-nothing compare-and-swap transaction over several refs. Once it lands, the
   * objects written for it are checked and any a concurrent prune removed are written again.
   */
  async updateRefs(updates: RefUpdate[]): Promise<TransactionResult> {
    this.refuseIfMoved();
    for (let n = 0; ; n++) {
      // A transaction git would refuse costs the long-lived update-ref process its life: check
      // the expected values here first, just before sending (git still checks them under lock).
      const direct = this.looseRefs?.update(updates, (oid) => this.writer.isPending(oid)) ?? null;
      const early = !direct && this.session && this.refFiles ? staleBeforeSending(this.refFiles, this.repo.storeDir, updates) : null;
      if (early) return early;
      const r = direct ?? (await (this.session ? this.session.update(updates) : updateRefs(this.storeCwd, updates, this.zeroOid, this.actor.agent)));
      if (r.ok) {
        this.writer.settle();
        this.refFiles?.touch(updates.map((u) => u.ref));
        this.refuseIfMovedDuring();
        if (this.landedWork.size) this.runLanded(updates);
      }
      // git refused because an object vanished before the update: write it again, then retry.
      if (r.ok || r.reason !== "missing_object" || n >= 3 || this.writer.restoreMissing() === 0) return r;
    }
  }

  private runLanded(updates: RefUpdate[]): void {
    const done = new Set<string>();
    for (const u of updates) {
      const work = u.new ? this.landedWork.get(u.new) : undefined;
      if (!work) continue;
      done.add(u.new!);
      for (const fn of work) {
        try {
          fn(u.ref);
        } catch {
          /* a cache of the landed record: only the next read is slower */
        }
      }
    }
    for (const oid of done) this.landedWork.delete(oid);
  }

  /** Where our git commands run: this worktree (so HEAD means its HEAD), or the git dir of a bare repo. */
  get cwd(): string {
    return this.repo.workTree ?? this.repo.gitDir;
  }

  /**
   * Where git commands on the coordination refs and their objects run: the same as cwd, or the
   * separate store (repo.ts storeDirOf), which run.ts names as GIT_DIR. Commands on the user's
   * code, branches and configuration run in cwd.
   */
  get storeCwd(): string {
    return this.repo.storeDir === this.repo.commonDir ? this.cwd : this.repo.storeDir;
  }

  /** What a push to, or a listing of, a sync remote on this machine's disk or over HTTP reads of this clone (git/path-remote.ts, git/http-remote.ts). */
  get remoteSource(): PathRemoteSource {
    if (this.remoteSourceMemo) return this.remoteSourceMemo;
    const { storeDir, commonDir, gitDir } = this.repo;
    const own = storeDir === commonDir;
    return (this.remoteSourceMemo = {
      format: this.repo.objectFormat,
      read: (oid) => this.reader.read(oid),
      recent: (oid) => this.writer.recentObject(oid) !== undefined,
      // A separate store's config includes the repository's first (separate-store.ts).
      config: (want) => scanConfig(process.env, storeDir, own ? gitDir : null, want, own ? null : `${commonDir}/config`, this.configRead()),
      stateDir: `${commonDir}/handoff`,
      gitCwd: this.storeCwd,
    });
  }
  private remoteSourceMemo: PathRemoteSource | undefined;

  /**
   * The repository's guard ref (separate-store.ts) is there but the store it stands for is not
   * (its folder removed by hand): the coordination refs are missing, which must not read as an
   * empty set nor fail as a lock clash. Asked before writes and when a listing comes back empty.
   */
  private refuseIfStoreMissing(): void {
    if (this.separateStore || !this.refFiles) return;
    this.storeMissing ??= guardedWithoutStore(this.repo.commonDir, this.refFiles);
    if (!this.storeMissing) return;
    // The guards and a store: the refs moved after this store opened.
    if (hasSeparateStore(this.repo.commonDir)) this.failMoved(true);
    fail(
      "corrupt_state",
      `this repository's coordination refs were moved to a separate store, ${this.repo.commonDir}/${SEPARATE_STORE}, which is not there (removed by hand?): nothing was read or written`,
      { cause: "store_missing" },
      [{ action: "fix_input", detail: `restore ${this.repo.commonDir}/${SEPARATE_STORE} from a backup; or start over from the sync remote: git handoff store --shared, then git handoff sync` }],
    );
  }

  /**
   * A failure of this store told as what caused it when its refs moved away meanwhile (a git
   * process that found the store gone, a cat-file that lost its repository): the refusal
   * refuseIfMoved gives, in place of an unexpected error. Likewise a file system failure while
   * .git/handoff is not a folder (a file there: every lock and cache under it fails with ENOTDIR)
   * is that refusal, naming it. Anything else is returned as it is.
   */
  explainFailure(e: unknown): unknown {
    if (e instanceof HandoffError) return e;
    try {
      this.refuseIfMoved();
    } catch (moved) {
      return moved;
    }
    const errno = typeof (e as NodeJS.ErrnoException | null)?.code === "string";
    return (errno && stateFolderProblem(`${this.repo.commonDir}/handoff`)) || e;
  }

  /**
   * A write that landed while `git handoff store` moved the refs: it may have gone to the old
   * place after the move's last look there (then it is lost), or before (then it was carried
   * over). Never acknowledged as written: the caller is told the outcome is unknown.
   */
  private refuseIfMovedDuring(): void {
    if (hasSeparateStore(this.repo.commonDir) === this.separateStore) return;
    fail(
      "outcome_unknown",
      "the coordination refs were moved (git handoff store) while this write was made: it may or may not have been carried over; look (git handoff task list, git handoff leases) and run it again if it is missing",
      { cause: "store_moved" },
      [{ action: "retry", detail: "look whether the write is there, then run the command again if it is not" }],
    );
  }

  /** The coordination refs live in a separate store (separate-store.ts), not among the user's refs. */
  get separateStore(): boolean {
    return this.repo.storeDir !== this.repo.commonDir;
  }

  /**
   * `git handoff store` moved the coordination refs since this store was opened: a process that
   * opened the repository before (a running server) must not go on reading and writing the old
   * place. One stat; before every write, and before every listing of a long-running process.
   */
  private refuseIfMoved(): void {
    const separateNow = hasSeparateStore(this.repo.commonDir);
    if (separateNow !== this.separateStore) this.failMoved(separateNow);
    this.refuseIfStoreMissing();
  }

  private failMoved(separateNow: boolean): never {
    fail(
      "environment",
      `the coordination refs moved to ${separateNow ? `${this.repo.commonDir}/${SEPARATE_STORE}` : `${this.repo.commonDir}`} (git handoff store) after this command opened the repository: nothing was written; run it again (restart it, if it is a process of your own that keeps a store open)`,
      { cause: "store_moved" },
      [{ action: "retry", detail: "run the command again: it opens the repository where the refs are now" }],
    );
  }

  /**
   * git's config files for a question asked after the opening: in a one-shot store, as its opening
   * read them while the repository's config (and a separate store's) is the file it read, so a
   * command reads each once, as git does; read anew once that changed, and always in a long-running
   * store. `stamp`: the repository config's configFileStamp, where the caller has just taken it.
   */
  configRead(stamp?: string): ConfigRead {
    const kept = this.openRead;
    if (!kept) return new ConfigRead();
    const { commonDir, storeDir } = this.repo;
    const same = (dir: string, now: string) => (kept.file(`${dir}/config`)?.stamp || "none") === now;
    if (same(commonDir, stamp ?? configFileStamp(commonDir)) && (storeDir === commonDir || same(storeDir, configFileStamp(storeDir)))) return kept;
    return (this.openRead = new ConfigRead());
  }

  /**
   * Keeps git's config files as this one-shot store's opening read them, for the next process's
   * opening (config-memo.ts): what a pre-edit hook does after its answer. Nothing in a long-running store.
   */
  saveConfigMemo(): void {
    this.openRead?.saveMemo();
  }

  /** The sync remote (git config handoff.remote, else origin when it exists), or null. */
  syncRemote(): Promise<string | null> {
    // Read again when .git/config changed: a running server must follow `git handoff remote`
    // (a team moving to a dedicated coordination remote), or its claims would go on being granted
    // through the old remote while the clones that moved grant through the new one.
    const stamp = configFileStamp(this.repo.commonDir);
    if (stamp !== this.remoteStamp) this.remoteName = undefined;
    this.remoteStamp = stamp;
    this.remoteName ??= import("../git/configured-remote.ts").then(async (m) => {
      const name = (await m.configuredRemote(this.cwd, this.repo.commonDir, this.configRead(stamp))).name;
      // It names refs/handoff-remotes/<name>/ and a lock file: one safe component only.
      if (name !== null && refComponentProblem(name)) {
        fail("invalid_input", `git config handoff.remote is ${JSON.stringify(name)}: ${refComponentProblem(name)}; set it with git handoff remote <name>`);
      }
      return name;
    });
    return this.remoteName;
  }

  now(): Date {
    return this.clock();
  }

  /** Refs of the sync remote held back as from a newer git-handoff: what this clone holds of them may be stale. */
  async heldAsNewer(): Promise<Map<string, NewerRef>> {
    return this.remoteGate?.newer ? this.remoteGate.newer(this) : new Map();
  }

  /**
   * The takeover grace for a write that may sweep another agent's expired lease: the one set by an
   * exclusive write through the remote, else, with a sync remote, the sync layer's estimate on
   * file (no network call); without a remote, none (every holder's clock is this one).
   */
  async takeoverGrace(): Promise<number> {
    if (this.takeoverGraceMs || !this.remoteGate?.grace) return this.takeoverGraceMs;
    const remote = await this.syncRemote();
    return remote ? this.remoteGate.grace(this, remote) : 0;
  }

  /**
   * The context of a write of a task or of the lease set: through a sync remote, another agent's
   * expired claim or lease stands for the takeover grace (takeoverGrace), so a clock ahead
   * finishes, fails or takes over no task, and sweeps no lease, still live for its holder. A
   * `done`, a release or a hook's lease is no exclusive write: with only the exclusive writes'
   * grace it had none. Every writer of a task or the lease set takes its context from here.
   */
  async writeContext(now: Date): Promise<OpContext> {
    const grace = await this.takeoverGrace();
    return { actor: this.actor, now, ...(grace ? { takeoverGraceMs: grace } : {}) };
  }

  /**
   * `load()` once per key for the views that keep records between runs (keepRecords) or answers
   * across Stores (keepAnswersIn), else a plain `load()`. The key must name immutable content (a commit id).
   */
  async kept<T>(key: string, load: () => Promise<T>): Promise<T> {
    const keep = this.diskRecords ?? this.answers;
    if (!keep) return load();
    const hit = keep.get(key);
    if (hit !== undefined) return hit as T;
    const value = await load();
    if (this.answers && this.answers.size >= KEPT_ANSWERS_LIMIT) this.answers.clear();
    keep.set(key, value);
    return value;
  }

  /**
   * A long-running view (the dashboard) keeps what `kept` loads in `map`, which outlives this Store
   * (a FreshStore reopens it when the policy or config changes): without it every rebuild asked git
   * for each agent's merge base and changed paths again, 100 processes at 100 agents.
   */
  keepAnswersIn(map: Map<string, unknown>): void {
    this.answers = map;
  }

  /** Views that list many records (status) keep them between runs in .git/handoff/records.json (`file`: another, CALLER_RECORDS). */
  keepRecords(file?: { name: string; cap: number }): void {
    this.diskRecords ??= RecordCacheFile.in(this.repo.commonDir, file);
  }

  /** Whether this process keeps records between runs (a view that called keepRecords). */
  get keepsRecords(): boolean {
    return this.diskRecords !== null;
  }

  /** Saves what this process decoded for the next one-shot process (record-cache.ts). */
  flushRecords(): void {
    this.taskCache?.flush();
  }

  close(): void {
    this.closed = true;
    this.looseRefs?.close();
    this.flushRecords();
    this.diskRecords?.save();
    this.reader.close();
    this.writer.close();
    this.turns?.close();
    this.session?.close();
    this.refFiles?.close();
  }

  /**
   * The compare-and-swap loop. `attempt` reads current state, decides (throwing a refusal when the
   * intent cannot apply), writes objects and returns the ref updates. A lost race re-runs the whole
   * attempt on fresh state, so a refusal is always about the current state, never a stale one.
   */
  async casLoop<R>(attempt: Attempt<R>, opts: CasOptions = {}): Promise<R> {
    if (opts.restsOn?.size) attempt = restingOn(this, attempt, opts.restsOn);
    const deferred = !opts.exclusive && this.syncOptions.push && opts.deferrable && this.remoteGate?.deferred ? await this.syncRemote() : null;
    if (opts.exclusive || (this.syncOptions.push && !deferred)) {
      // With a sync remote, exclusive writes (and every write under --push) count once pushed.
      const remote = await this.syncRemote();
      if (remote) {
        // Granting locally what the remote has not seen would break exclusivity across clones.
        if (!this.remoteGate) fail("internal", "this store was opened without the sync layer but the clone has a sync remote");
        return this.remoteGate.exclusive(this, remote, attempt, opts);
      }
    }
    const turn = opts.exclusive ? await this.exclusiveTurn() : null;
    try {
      return await this.localLoop(attempt, deferred);
    } finally {
      turn?.give();
    }
  }

  /**
   * Contended long-running processes here take turns at exclusive writes (they all move the lease
   * ref): queued, each wins at its first attempt instead of most losing and starting over. One
   * that has not lost a race lately (or waited for a turn) pays nothing for it: null. Writes made
   * while the turn is held go ahead without queueing again, so a caller that tries several
   * candidates in a row (claim --next) can hold it across them.
   */
  async exclusiveTurn(): Promise<{ give(): void } | null> {
    if (!this.turns || Date.now() >= this.contendedUntil) return null;
    const turn = await this.turns.take("exclusive");
    if (turn.waited) this.noteContended();
    return turn;
  }

  /**
   * A file holding this long-running process's owner record, which its own locks can be hard
   * links to (owned-lock.ts: no new file a lock); null in a one-shot process.
   */
  lockOwnerFile(): OwnerFile | null {
    return this.turns?.ownerFile() ?? null;
  }

  /** Until when this process counts itself contended: it lost a local race or waited for a turn. */
  private contendedUntil = 0;

  /** A caller lost a race to another writer here (claim --next moving on), or waited for a write turn. */
  noteContended(): void {
    if (!this.turns) return;
    this.contendedUntil = Date.now() + CONTENDED_MS;
    const first = firstContention;
    firstContention = null;
    first?.();
  }

  private async localLoop<R>(attempt: Attempt<R>, deferred: string | null): Promise<R> {
    const started = Date.now();
    const deadline = started + RETRY_BUDGET_MS;
    let lastMessage = "";
    for (let n = 0; ; n++) {
      const { updates, result } = await attempt(this.now());
      if (updates.length === 0) return result;
      await this.remoteGate?.guardWrite?.(this, updates.map((u) => u.ref));
      const r = await this.updateRefs(updates);
      if (r.ok && deferred) await this.remoteGate!.deferred!(this, deferred, updates);
      if (r.ok) return result;
      this.noteContended();
      if (r.reason === "locked") failOnStaleLock(this.repo.storeDir, r.message);
      lastMessage = r.message;
      if (Date.now() >= deadline || n >= MAX_ATTEMPTS) {
        if (r.reason === "locked") failOnLingeringLock(this.repo.storeDir, r.message, Date.now() - started);
        break;
      }
      await sleep(backoff(n));
    }
    fail("lost_race", `gave up after repeated concurrent updates (${lastMessage}); try again`, {}, [
      { action: "retry", detail: "another writer kept the ref busy; run the command again" },
    ]);
  }
}

/**
 * Whether the repository holds the guard ref `refs/handoff` (separate-store.ts) while its store is
 * gone: `refs/handoff` is a folder (or absent) in a repository that keeps its refs, a file (or a
 * line of packed-refs) where they moved. One stat, and a packed lookup only without the folder.
 */
function guardedWithoutStore(commonDir: string, refs: RefFiles): boolean {
  try {
    return statSync(`${commonDir}/refs/handoff`).isFile();
  } catch {
    return refs.readPacked("refs/handoff") !== null;
  }
}

/** Answers a long-running view keeps (merge bases, changed paths: small) before it starts again. */
const KEPT_ANSWERS_LIMIT = 20_000;

/** Refs kept in the store: refs/handoff/, refs/handoff-remotes/, refs/handoff-local/ (sync's families). */
export function isStoreRef(name: string): boolean {
  return name.startsWith("refs/handoff");
}

/** A lost race seen before asking git: a ref that moved or is locked right now. */
function staleBeforeSending(refs: RefFiles, commonDir: string, updates: RefUpdate[]): TransactionResult | null {
  for (const u of updates) {
    if (existsSync(`${commonDir}/${u.ref}.lock`)) return { ok: false, reason: "locked", message: `Unable to create '${commonDir}/${u.ref}.lock': File exists (seen before sending)` };
    if (refs.read(u.ref) !== u.old) return { ok: false, reason: "stale", message: `cannot lock ref '${u.ref}': it moved (seen before sending)` };
  }
  return null;
}

/** One attempt of a compare-and-swap loop: decide on current state, return the ref updates. */
export type Attempt<R> = (now: Date) => Promise<{ updates: RefUpdate[]; result: R }>;

/** The narrow interface through which the store's compare-and-swap loop uses the sync remote. */
export interface RemoteGate {
  /** Runs the loop so its writes count only once they have landed on the remote. */
  exclusive<R>(store: Store, remote: string, attempt: Attempt<R>, opts?: CasOptions): Promise<R>;
  /** Fetches the remote's state and applies it here; `ok: false` when the remote cannot be read. */
  refresh(store: Store, remote: string): Promise<{ ok: boolean }>;
  /** A deferrable write landed here: push it with the next budgeted or urgent push (pending-push.ts). */
  deferred?(store: Store, remote: string, updates: RefUpdate[]): Promise<void>;
  /** The takeover grace from this clone's clock estimate on file (skew.ts), without a network call. */
  grace?(store: Store, remote: string): number;
  /** The sync remote's refs held back as from a newer git-handoff (newer-refs.ts), by ref name. */
  newer?(store: Store): Promise<Map<string, NewerRef>>;
  /** Refuses a local write to a ref held back as newer: it could never be sent. */
  guardWrite?(store: Store, refs: string[]): Promise<void>;
}

/** A ref of the sync remote in a record format newer than this build reads: this clone's copy may be stale. */
export interface NewerRef {
  ref: string;
  remote: string;
  reason: string;
}

export interface CasOptions {
  /**
   * The write grants something only one agent may have (claim, exclusive lease, reclaim). With a
   * sync remote configured it must land on the remote before it counts.
   */
  exclusive?: boolean;
  /**
   * Under `syncOptions.push`, the write need not reach the remote at once (a renewal, a
   * heartbeat): it lands here and goes out with the next push the push budget allows.
   */
  deferrable?: boolean;
  /**
   * With `exclusive`: the write only creates (a task someone waits on), so it takes nothing from
   * anyone and needs no clock check before it goes out (skew.ts guardClock).
   */
  createsOnly?: boolean;
  /**
   * Refs the decision read but does not change, with the values read (a claim's dependencies):
   * the write counts only while each still holds that value, here and on the sync remote
   * (rests-on.ts). A ref that moved here fails the attempt with `ReadMoved`.
   */
  restsOn?: ReadonlyMap<string, string>;
  /**
   * One deadline shared by several writes of one call (claim --next trying candidates): the sync
   * layer sets `until` on first use and bounds every later write by it.
   */
  deadline?: SharedDeadline;
}

export interface SharedDeadline {
  until?: number;
  /**
   * Nothing runs past `until`, not even the read that settles a push whose report was lost: for a
   * caller that would rather say it does not know than keep someone waiting (a waiter's cancel
   * once its --timeout ran out or Ctrl-C came).
   */
  firm?: boolean;
}

const RETRY_BUDGET_MS = 5000;
/** How long a lost race or a wait for a turn makes a process take turns (wall clock: pacing, not state). */
const CONTENDED_MS = 60_000;

/** Runs once, when a long-running process here first counts itself contended (onFirstContention). */
let firstContention: (() => void) | null = null;

/**
 * `fn` runs once, the first time a store of this process loses a local race or waits for a write
 * turn: other long-running processes here write the same refs, and share its cores (the MCP
 * server then compiles lighter: mcp/compiler-flags.ts).
 */
export function onFirstContention(fn: () => void): void {
  firstContention = fn;
}
const RECORD_CACHE_LIMIT = 20_000;
const MAX_ATTEMPTS = 60;

function backoff(n: number): number {
  const cap = Math.min(200, 4 * 2 ** Math.min(n, 6));
  return cap / 2 + Math.random() * (cap / 2);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The default agent name: user and host, plus the worktree folder when not the main one. */
export function defaultAgentName(repo: RepoInfo, env: NodeJS.ProcessEnv): string {
  let user = env.USER ?? env.USERNAME ?? "";
  if (!user) {
    try {
      user = loginName();
    } catch {
      user = "user";
    }
  }
  const host = sanitizeIdPart(thisHost().split(".")[0] ?? "host");
  const base = `${sanitizeIdPart(user)}@${host}`;
  return repo.isLinkedWorktree && repo.workTree ? `${base}.${sanitizeIdPart(basename(repo.workTree))}` : base;
}

export function parseClock(env: NodeJS.ProcessEnv): () => Date {
  const fixed = env.HANDOFF_NOW;
  if (!fixed) return () => new Date();
  const t = Date.parse(fixed);
  if (Number.isNaN(t)) fail("invalid_input", `HANDOFF_NOW is not an ISO time: ${JSON.stringify(fixed)}`);
  return () => new Date(t);
}

/** The ref write policy of a one-shot process, from git's files (null: git must be asked). */
function storeWritePolicy(repo: RepoInfo, read: ConfigRead): RefWritePolicy | null {
  const own = repo.storeDir === repo.commonDir;
  return scanRefWritePolicy(process.env, repo.storeDir, own ? repo.gitDir : null, own ? repo.workTree : null, own ? null : repo.commonDir, read);
}

/** A separate store's config includes the repository's (separate-store.ts); the repository's own store has none. */
function storeIncludes(repo: RepoInfo): string | null {
  return repo.storeDir === repo.commonDir ? null : `${repo.commonDir}/config`;
}

export async function openStore(opts: OpenOptions): Promise<Store> {
  const env = opts.env ?? process.env;
  // git's config files, each read once by this opening whatever it asks of them (config-read.ts).
  const read = new ConfigRead();
  const repo = discoverRepo(opts.cwd, read);
  // An empty HANDOFF_AGENT (`HANDOFF_AGENT= cmd`) means unset, as with most environment variables.
  const agent = validateAgentId(opts.agent ?? (env.HANDOFF_AGENT || defaultAgentName(repo, env)));
  const actor: Actor = {
    agent,
    worktree: repo.workTree,
    branch: repo.branch,
    scope: deriveScope({ isLinkedWorktree: repo.isLinkedWorktree, detached: repo.branch === null && !repo.isBare, underTempDir: repo.underTempDir }),
  };
  // core.sharedRepository applies from the first file written under .git/handoff (the policy
  // cache, just below); a one-shot process reads it with the ref write policy, in one scan.
  const warm = opts.warm ?? false;
  const policy = warm ? null : storeWritePolicy(repo, read);
  const shared = policy?.sharedPerm ?? repoSharedPerm(repo.storeDir, repo.storeDir === repo.commonDir ? repo.gitDir : null, storeIncludes(repo), read);
  applySharedUmask(shared);
  const { config, source } = await loadRepositoryConfig(repo, read);
  const store = new Store(repo, actor, config, parseClock(env), { warm, policy, shared, read });
  store.policySource = source;
  if (source.fallback) store.notices.push(source.fallback);
  store.notices.push(...source.setAside, ...[...new Set(source.warnings)].map((w) => `warning: ${w}`));
  store.syncOptions = { push: opts.push ?? env.HANDOFF_PUSH === "1", offline: opts.offline ?? env.HANDOFF_OFFLINE === "1" };
  return store;
}

export { HandoffError };
