// minimatch set up on first use, in the bundles (scripts/build.mjs), as zod is (scripts/lazy-zod.mjs).
// Our modules ask minimatch only for a glob no shortcut answers (core/glob-overlap.ts: a lease or
// scope glob beyond a folder or a file name) and for `{a,b}` alternatives (core/paths.ts,
// hooks/fast-cache.ts): a cold `task show`, `check` or `claim` of plain paths never does, yet
// minimatch, brace-expansion and nonrecursive-glob-match (~78 KB of hot-main.cjs's text) were
// declared at every bundle's top, each of their functions a SharedFunctionInfo in the code cache
// that every start deserialises. Our modules' `import { ... } from "minimatch"` gets a stand-in: a
// function for each function imported, and for each class a class whose constructor makes the
// real one (a static member is not stood in for: none is used). Given `lazy`
// (scripts/cold-group.mjs), the stand-in asks for a module re-exporting those names as
// `__LAZY_minimatch__(<its namespace>)`, so minimatch's modules go into a function of the bundle
// run at the first call. Tests run the sources, which import minimatch itself.
import { join } from "node:path";
import { isClass, namesImported, packageStandIn } from "./stand-in.mjs";

export function lazyMinimatch(root, lazy) {
  return packageStandIn(root, lazy, {
    name: "lazy-minimatch",
    specifier: "minimatch",
    tag: "minimatch",
    offered: (real) => {
      const used = [...namesImported(join(root, "src"), "minimatch")];
      for (const k of used) if (typeof real[k] !== "function") throw new Error(`minimatch's ${k} is no function: scripts/lazy-minimatch.mjs cannot stand in for it`);
      return { fns: used.filter((k) => !isClass(real[k])), classes: used.filter((k) => isClass(real[k])) };
    },
  });
}
