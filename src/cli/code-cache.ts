// Node 20 compiles every bundle from scratch on each start; for a CLI that runs before every
// agent edit that is a third of its own cost. We keep V8's code cache for each bundle in the
// user's private cache folder (never a shared temp folder: cached code is trusted input), keyed
// by bundle size, mtime and Node version, written once after a run so it holds the functions that
// run actually compiled (after a long run, only provisionally: LONG_RUN_MS). One cache per verb, and per subcommand of `task` (`variant`, command-line.ts cacheVariant): a cache holds what its first run
// compiled, so one shared by every verb of a bundle fitted whichever verb ran first, and the
// others compiled the rest of their code lazily at every start (a cold claim with the cache a
// `task show` left: 3% slower than with its own). Without a cache folder, or with a cache that
// cannot be read, the bundle is compiled without one.
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import type Module from "node:module";
import { homeDirOf } from "../git/env-dirs.ts";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { fnv1a32, hex32 } from "../core/fnv.ts";

type ModuleCtor = typeof Module & { _nodeModulePaths(dir: string): string[] };

/**
 * A run longer than this leaves a provisional cache, which the next run that is not long writes
 * anew. V8 drops the bytecode of functions a long run has not called for a while (start-up, the
 * command line's parsing), so a cache made at its exit lacks them and every later start compiles
 * them again: the first `events` in a repository of 100,000 events (building its index, 9 s) left
 * a cache of 290 KB where an ordinary run leaves 440 KB, and each later `events` took 1.17x as
 * long (whole processes, A B A B, 20 pairs), until the bundle changed. A cache is marked
 * provisional by its mode (read-only to its owner: no byte of V8's data is ours to mark, and the
 * loader stats the file anyway). HANDOFF_CODE_CACHE_LONG_MS sets the bound for tests.
 */
const LONG_RUN_MS = 1000;
const PROVISIONAL_MODE = 0o400;

function longRun(): boolean {
  return process.uptime() * 1000 > (Number(process.env.HANDOFF_CODE_CACHE_LONG_MS) || LONG_RUN_MS);
}

function cacheDir(): string | null {
  if (process.env.HANDOFF_NO_CODE_CACHE) return null;
  const home = process.env.XDG_CACHE_HOME ? "" : homeDirOf();
  const base = process.env.XDG_CACHE_HOME || (home ? join(home, ".cache") : "");
  return base ? join(base, "git-handoff") : null;
}

/** `<bundle name>-<hash of its folder>-`: what every cache of one installed bundle starts with (runs at every start). */
function cachePrefix(file: string): string {
  return `${basename(file)}-${hex32(fnv1a32(dirname(file)))}-`;
}

/**
 * Loads a bundle through its code cache for `variant` (the verb the command runs, `task-show` for a
 * subcommand of task, or any fixed word: never anything a user typed that is not a known verb, or
 * typos would each leave a cache).
 * A bundle file is one function expression taking what Node's module wrapper passes (the build
 * writes the wrapper into it: scripts/build.mjs), compiled here as read.
 */
export function loadBundle(file: string, variant = "any"): unknown {
  const dir = cacheDir();
  let cachePath = "";
  let read: { source: string; cached?: Buffer; provisional?: boolean } | null = null;
  let build = "";
  if (dir) {
    try {
      const st = statSync(file);
      // Named by the bundle's path too: caches of other checkouts' builds on this machine (a
      // developer's and a test clone's) must not evict each other when pruned below.
      build = `${cachePrefix(file)}${st.size}-${Math.floor(st.mtimeMs)}-${process.version}-`;
      cachePath = join(dir, `${build}${variant}.cache`);
      read = readBoth(file, st.size, cachePath);
    } catch {
      read = null; // a bundle that changed size as it was read: read plainly below
    }
  }
  // latin1: the build writes the bundles in ASCII (scripts/build.mjs checks it), and a string of
  // one byte a character is made without UTF-8 decoding.
  const cached = read?.cached;
  const script = new Script(read?.source ?? readFileSync(file, "latin1"), { filename: file, ...(cached ? { cachedData: cached } : {}) });
  // Node's CommonJS Module class, as the dispatcher's own module has it: importing node:module
  // for it loaded that module's own code at every start (~0.3 ms).
  const M = module.constructor as unknown as ModuleCtor;
  const mod = new M(file, module) as Module & { filename: string; paths: string[]; loaded: boolean; loadBeside?: (name: string) => unknown };
  mod.filename = file;
  mod.paths = M._nodeModulePaths(dirname(file));
  // A file the build wrote beside the bundle (scripts/lazy-file.mjs: its lazy groups' code), which
  // the bundle reads on first use: through a code cache of its own for the same verb, as the
  // bundle is, so that the code it runs is not compiled again at every start.
  mod.loadBeside = (name: string) => loadBundle(join(dirname(file), name), variant);
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  // Each module of a bundle requires its builtins itself (node:fs 48 times in hot-main.cjs), and
  // every require of a builtin walks Node's loader again (~5 us each in a cold process): one
  // answer per id, as Node's own module cache would give.
  const required = new Map<string, unknown>();
  const req = (id: string) => {
    let m = required.get(id);
    if (m === undefined) required.set(id, (m = mod.require(id)));
    return m;
  };
  fn.call(mod.exports, mod.exports, req, mod, file, dirname(file));
  mod.loaded = true;
  const ranPaths = (mod.exports as PathsOfRun).codePaths;
  const fresh = !cached || script.cachedDataRejected || read?.provisional;
  if (dir && cachePath && (fresh || ranPaths)) {
    process.once("exit", () => {
      // A cache made under flags this run changed would be rejected by every start under the
      // defaults (PathsOfRun.flagsChanged): the one read, if any, stays.
      if ((mod.exports as PathsOfRun).flagsChanged?.()) return;
      const long = longRun();
      // A provisional cache taken as it is stands until a run that is not long replaces it.
      if (cached && !script.cachedDataRejected && long) return;
      // Paths this cache's runs took (PathsOfRun): a fresh cache holds this run's alone.
      const ran = ranPaths?.() ?? 0;
      const known = fresh ? 0 : pathsRead(cachePath);
      if (!fresh && (ran & ~known) === 0) return;
      try {
        makeCacheDir(dir);
        const tmp = `${cachePath}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: long ? PROVISIONAL_MODE : 0o600 });
        renameSync(tmp, cachePath);
        if (known | ran) writeFileSync(`${cachePath}${PATHS_SUFFIX}`, String(known | ran), { mode: 0o600 });
        else if (ranPaths) rmSync(`${cachePath}${PATHS_SUFFIX}`, { force: true }); // a fresh cache: none taken yet
        // Caches of earlier builds of this bundle are dead weight; other verbs' of this build are not.
        const prefix = cachePrefix(file);
        for (const f of readdirSync(dir)) if (f.startsWith(prefix) && !f.startsWith(build)) rmSync(join(dir, f), { force: true });
      } catch {
        /* a cache we cannot write is only a slower start */
      }
    });
  }
  return mod.exports;
}

/**
 * What a bundle may export: the paths of its code this run took, as bits. A cache holds what the
 * runs that wrote it compiled, and a bundle whose runs take different paths (the pre-edit hook's
 * denial, warning and free file: hooks/edit-hook.ts codePaths) compiled the rest at every start, the
 * denial's rendering (~0.3 ms) under a cache its first free file left and the drift notice and
 * deliveries (~1.5 ms) under one a first denial left. So a run that took a path the cache's runs
 * had not writes it again at exit, with what it compiled besides what the cache gave it: once per
 * path, after the answer. The paths are kept beside the cache (`<cache>.paths`), read at exit only.
 */
interface PathsOfRun {
  codePaths?: () => number;
  /** Whether the run changed V8's flags (the MCP server, once contended: mcp/compiler-flags.ts). */
  flagsChanged?: () => boolean;
}

const PATHS_SUFFIX = ".paths";

function pathsRead(cachePath: string): number {
  try {
    const n = Number(readFileSync(`${cachePath}${PATHS_SUFFIX}`, "latin1"));
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

/**
 * The cache folder, made where it is missing, but never the home it sits in: a process run with a
 * HOME that is not there (a service account's `/nonexistent`, a sandbox's) leaves no cache, as it
 * leaves no other file; it had made `/nonexistent/.cache/git-handoff`. XDG_CACHE_HOME is made as
 * the XDG base directory specification asks (0700).
 */
function makeCacheDir(dir: string): void {
  if (process.env.XDG_CACHE_HOME) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return;
  }
  for (const d of [dirname(dir), dir]) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
}

/**
 * The bundle's text and its code cache (undefined when there is none yet: it is written at exit,
 * or cannot be read), read through one buffer: the text is copied out of it into a string before
 * the cache is read into it. Memory a process touches first costs a page fault a page, which on a
 * virtual machine is most of reading a file already in the page cache: two half-megabyte buffers
 * cost a cold command ~1.5 ms more than one (the cache is consumed as the script is compiled).
 */
function readBoth(file: string, size: number, cachePath: string): { source: string; cached?: Buffer; provisional?: boolean } {
  let cacheFd = -1;
  try {
    cacheFd = openSync(cachePath, "r");
  } catch {
    /* no cache yet */
  }
  try {
    const st = cacheFd >= 0 ? fstatSync(cacheFd) : null;
    const cacheSize = st?.size ?? 0;
    const buf = Buffer.allocUnsafeSlow(Math.max(size, cacheSize) + 1);
    readExactly(file, -1, buf, size);
    const source = buf.toString("latin1", 0, size);
    if (cacheFd < 0 || !cacheSize) return { source };
    try {
      readExactly(cachePath, cacheFd, buf, cacheSize);
    } catch {
      return { source }; // a cache cut short as it was read: compiled without it
    }
    return { source, cached: buf.subarray(0, cacheSize), provisional: (st!.mode & 0o200) === 0 };
  } finally {
    if (cacheFd >= 0) closeSync(cacheFd);
  }
}

/**
 * Fills buf[0, n) from the file (opened here unless `fd` is given); throws unless it holds exactly
 * n bytes. One byte more is asked for: a file that grew since it was measured fills it, and a read
 * that stops short of the asked length has met the end (a regular file's reads are whole).
 */
function readExactly(path: string, fd: number, buf: Buffer, n: number): void {
  const own = fd < 0;
  if (own) fd = openSync(path, "r");
  try {
    let at = 0;
    for (;;) {
      const want = n + 1 - at;
      const got = readSync(fd, buf, at, want, at);
      at += got;
      if (got === 0 || got < want || at > n) break;
    }
    if (at !== n) throw new Error(`${path} is not ${n} bytes`);
  } finally {
    if (own) closeSync(fd);
  }
}
