// Our own modules that a cold command loads but never runs, set up on first use in the bundles
// (scripts/build.mjs), as zod and minimatch are (scripts/lazy-zod.mjs, scripts/lazy-minimatch.mjs).
// The lease tree (a lease set past LEASE_TREE_AT), the task order file (`task list --limit`, `ready`),
// the pack reader (an object in a pack), the write turns and the followed ref folders (a warm
// process's), the clock readings (a sync remote), the help's examples, the git runner (a git
// process), the object writer's pool of temp files (a warm process's), the ready index, the
// repair advice and the hot bundle's commander program (hot-program.ts: a command line that
// src/cli/fast-line.ts does not read) are each called from code every bundle sets up, but a cold
// `task show`, `check` or `claim` never calls them: declared at the bundle's top, each function was a
// SharedFunctionInfo in every code cache, and each module's top-level statements ran at load.
// Each module in FIRST_USE gets a stand-in for the modules outside its family: a function for each
// function it exports, and for each class a class whose constructor makes the real one (and whose
// `instanceof` asks the real one). Anything else it exports (a constant, a class with a static
// member that is not private) is not offered, so an import of one from outside the family fails
// the build: a constant the rest of the code needs lives in a small module of its own. Given `lazy`
// (scripts/cold-group.mjs), the stand-in asks for the real namespace as `__LAZY_<family>__(ns)`, so
// the family's modules go into a function of the bundle run at the first call. Tests run the
// sources, which import the modules themselves.
import { readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { standInText } from "./stand-in.mjs";

/** Module -> its family: one function of the bundle sets up a family's modules together. */
export const FIRST_USE = {
  "src/store/lease-tree.ts": "leaseTree",
  "src/store/task-order.ts": "taskOrder",
  "src/store/task-order-file.ts": "taskOrder",
  "src/git/pack-files.ts": "packs",
  "src/git/pack-read.ts": "packs",
  "src/git/write-turn.ts": "writeTurns",
  "src/git/ref-watch.ts": "refWatch",
  "src/sync/skew.ts": "skew",
  "src/cli/examples.ts": "examples",
  "src/git/run.ts": "gitProcesses",
  "src/git/temp-files.ts": "tempFiles",
  "src/store/ready-index.ts": "readyIndex",
  "src/sync/repair-hazard.ts": "repairHazard",
  "src/cli/hot-program.ts": "hotProgram",
  "src/store/server-records.ts": "serverRecords",
};

/**
 * The functions and classes a module exports (`export [async] function[*]`, `export class`): a
 * generator's stand-in returns the real one's generator. A class with a static member other
 * code could ask for is left out (its body: from its line to the next `}` at a line's start).
 */
function exported(text) {
  const fns = [...text.matchAll(/^export (?:async )?function\*? ?(\w+)/gm)].map((m) => m[1]);
  const classes = [...text.matchAll(/^export (?:abstract )?class (\w+)[^]*?\n\}/gm)].filter((m) => !/^\s+(?:public |protected )?static /m.test(m[0])).map((m) => m[1]);
  return { fns: [...new Set(fns)], classes };
}

export function lazyOurs(root, lazy) {
  const family = new Map(Object.entries(FIRST_USE).map(([p, f]) => [join(root, p), f]));
  const src = join(root, "src") + sep;
  return {
    name: "lazy-ours",
    setup(b) {
      if (!lazy) return;
      b.onResolve({ filter: /\.ts$/ }, (args) => {
        if (args.namespace !== "file" || !args.importer.startsWith(src)) return undefined;
        const path = resolve(args.resolveDir, args.path);
        const f = family.get(path);
        if (!f || family.get(args.importer) === f) return undefined;
        return { path: relative(process.cwd(), path), namespace: "lazy-ours" };
      });
      b.onLoad({ filter: /.*/, namespace: "lazy-ours" }, (args) => {
        const real = resolve(process.cwd(), args.path);
        const { fns, classes } = exported(readFileSync(real, "utf8"));
        lazy.add(`lazy-ours:${args.path}`, args.path, family.get(real));
        const head = [`import * as real from ${JSON.stringify(real)};`, `let m;`, `const get = () => (m ??= __LAZY_${family.get(real)}__(real));`];
        return { contents: standInText(head, { fns, classes }), loader: "js", resolveDir: root };
      });
    },
  };
}
