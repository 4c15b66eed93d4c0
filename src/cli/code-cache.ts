// Node 20 compiles every bundle from scratch on each start; for a CLI that runs before every
// agent edit that is a third of its own cost. We keep V8's code cache for each bundle in the
// user's private cache folder (never a shared temp folder: cached code is trusted input), keyed
// by bundle size, mtime and Node version, written once after a run so it holds the functions that
// run actually compiled. Anything unexpected falls back to a plain require.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { fnv1a32, hex32 } from "../core/fnv.ts";

type ModuleCtor = typeof Module & { wrap(src: string): string; _nodeModulePaths(dir: string): string[] };

function cacheDir(): string | null {
  if (process.env.HANDOFF_NO_CODE_CACHE) return null;
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), ".cache") : "");
  return base ? join(base, "git-handoff") : null;
}

/** `<bundle name>-<hash of its folder>-`: what every cache of one installed bundle starts with (runs at every start). */
function cachePrefix(file: string): string {
  return `${basename(file)}-${hex32(fnv1a32(dirname(file)))}-`;
}

export function loadBundle(file: string): unknown {
  const dir = cacheDir();
  if (!dir) return require(file);
  let script: Script;
  let cachePath: string;
  let cached: Buffer | undefined;
  try {
    const st = statSync(file);
    // Named by the bundle's path too: caches of other checkouts' builds on this machine (a
    // developer's and a test clone's) must not evict each other when pruned below.
    const key = `${cachePrefix(file)}${st.size}-${Math.floor(st.mtimeMs)}-${process.version}.cache`;
    cachePath = join(dir, key);
    try {
      cached = readFileSync(cachePath);
    } catch {
      cached = undefined;
    }
    script = new Script((Module as ModuleCtor).wrap(readFileSync(file, "utf8")), { filename: file, ...(cached ? { cachedData: cached } : {}) });
  } catch {
    return require(file);
  }
  const M = Module as ModuleCtor;
  const mod = new Module(file, module) as Module & { filename: string; paths: string[]; loaded: boolean };
  mod.filename = file;
  mod.paths = M._nodeModulePaths(dirname(file));
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(mod.exports, mod.exports, (id: string) => mod.require(id), mod, file, dirname(file));
  mod.loaded = true;
  if (!cached || script.cachedDataRejected) {
    process.once("exit", () => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const tmp = `${cachePath}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, cachePath);
        // Caches of earlier builds of this bundle are dead weight.
        const prefix = cachePrefix(file);
        for (const f of readdirSync(dir)) if (f.startsWith(prefix) && f !== basename(cachePath)) rmSync(join(dir, f), { force: true });
      } catch {
        /* a cache we cannot write is only a slower start */
      }
    });
  }
  return mod.exports;
}
