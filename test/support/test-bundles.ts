// The test processes' code, bundled once per run: test/run.ts builds the selected test files and
// uvu-files.ts with esbuild in one call, and each test process is a plain `node` on the bundles
// instead of `node --import tsx` on the sources. tsx costs every process ~0.45 CPU-seconds to
// register and ~0.7 more to transform src/ as it is imported; one build of the whole suite costs
// a few seconds. HANDOFF_TEST_TSX=1 runs the sources under tsx as before.
//
// What keeps the bundles meaning what the sources do:
// - splitting: what several test files import (src/, test/support/) is one shared chunk, so the
//   files that share a process share module instances, as they do under tsx;
// - packages external: node_modules are loaded by Node as usual, from the bundles' folder, which
//   sits under the repository's node_modules so bare imports resolve there;
// - import.meta.dirname, .filename and .url name the source file, not the bundle: paths built
//   from them (fixtures, dist/, scripts for child processes) stay where they were;
// - source maps, so a stack trace names the .ts file and line (uvu's failures, CLI-log callers).
// A `.ts` file a test starts in a child process (`--import tsx`, support/bundle.ts) is its own
// matter: it is read from the sources, not from here. A computed `import()` is not bundled and
// resolves next to the chunk, where no source is: src/ must not have one (src/store/config-file.ts).
import { build, stop, transform, type Plugin } from "esbuild";
import { mkdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { removeDeadRuns } from "./dead-runs.ts";

export interface TestBundles {
  dir: string;
  /** The bundled uvu-files.ts: `node <runner> --bundles=<dir> test/a.test.ts ...` */
  runner: string;
}

/**
 * Where a run's bundles go: under node_modules, so the bundles' bare imports resolve there. Its
 * real path (node_modules may be a link, as in a worktree that shares another's): Node runs a
 * module from its real path, and the source maps' relative paths must lead back from there.
 */
const bundlesRoot = (root: string) => join(realpathSync(join(root, "node_modules")), ".cache/handoff-test-bundles");

/** The bundle of test/a.test.ts in `dir` (the layout under dir mirrors the repository's). */
const bundleOf = (dir: string, file: string) => join(dir, file.replace(/\.ts$/, ".mjs"));

/** import.meta's paths replaced by the source file's own, in the files that use them. */
function sourceMeta(root: string): Plugin {
  const tsconfigRaw = readFileSync(join(root, "tsconfig.json"), "utf8");
  return {
    name: "source-meta",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = readFileSync(args.path, "utf8");
        if (!source.includes("import.meta")) return undefined;
        // esbuild's define rewrites the expressions only, never a string that spells them (a
        // banner written for a child's bundle, as in support/bundle.ts).
        const out = await transform(source, {
          loader: "ts",
          format: "esm",
          target: "node20",
          sourcefile: args.path,
          sourcemap: "inline",
          tsconfigRaw,
          define: {
            "import.meta.dirname": JSON.stringify(dirname(args.path)),
            "import.meta.filename": JSON.stringify(args.path),
            "import.meta.url": JSON.stringify(pathToFileURL(args.path).href),
          },
        });
        return { contents: out.code, loader: "js", resolveDir: dirname(args.path) };
      });
    },
  };
}

/** Bundles `files` (paths under `root`, e.g. test/a.test.ts) and the runner; the caller removes `dir`. */
export async function bundleTests(root: string, files: string[]): Promise<TestBundles> {
  // The bundles of runs whose process is gone (a run killed before its own clean-up).
  removeDeadRuns(bundlesRoot(root), /^(\d+)-/);
  const dir = join(bundlesRoot(root), `${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  const runnerSource = "test/support/uvu-files.ts";
  try {
    await build({
      entryPoints: [runnerSource, ...files].map((f) => join(root, f)),
      absWorkingDir: root,
      outbase: root,
      outdir: dir,
      outExtension: { ".js": ".mjs" },
      chunkNames: "chunks/[name]-[hash]",
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      sourcemap: true,
      // The sources are on disk beside the bundles' paths: without their text the maps are half the size.
      sourcesContent: false,
      logLevel: "warning",
      plugins: [sourceMeta(root)],
    });
  } catch (e) {
    // A file that does not build fails the run here, with esbuild's message naming it.
    rmSync(dir, { recursive: true, force: true });
    throw e;
  } finally {
    // The build service is a child process: stopped, the run does not keep it, and its CPU is counted.
    await stop();
  }
  return { dir, runner: bundleOf(dir, runnerSource) };
}
