// Test support: a helper script (racer.ts, soak-agent.ts), or a src/ module a test's child
// process imports (text-order, git-temp-objects, exit-when-idle), bundled once with esbuild, the way the
// product's own dist/ bundles are made, so each of the many processes a race starts costs a plain
// `node` start instead of loading tsx and transforming the whole of src/ again (about 0.6 of the
// 0.75 CPU-seconds a racer took). The code the process runs is the same src/ code, bundled.
import { buildSync } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const DIST = resolve(import.meta.dirname, "../../dist");
const built = new Map<string, string>();
let dir = "";

/**
 * The path of `entry` bundled as an ES module, built on first use and removed when this process exits.
 * `metaDirname`: the folder `import.meta.dirname` names in the bundle, for code that finds files
 * beside its source by it (src/demo/sandbox.ts, the one file in src/ that reads it: the CLI and the
 * fixture); unset, it names the bundle's own temp folder.
 */
export function bundled(entry: string, o: { metaDirname?: string } = {}): string {
  const done = built.get(entry);
  if (done) return done;
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), "handoff-bundle-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  const out = join(dir, basename(entry).replace(/\.ts$/, ".mjs"));
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: out,
    logLevel: "warning",
    // As in dist/: `require` for bundled CommonJS dependencies, and `__dirname` naming dist/, where
    // src/ looks for what sits beside its bundles (yaml-bundle.cjs, the CLI, ../git-hooks).
    banner: { js: `import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url); const __dirname = ${JSON.stringify(DIST)};` },
    ...(o.metaDirname ? { define: { "import.meta.dirname": JSON.stringify(o.metaDirname) } } : {}),
  });
  built.set(entry, out);
  return out;
}
