// zod set up on first use, in the bundles (scripts/build.mjs). Our record schemas are built on
// first use (src/core/schema-helpers.ts lazySchema), but every module that defines one imports
// zod, so zod's own modules were set up as each bundle started: its classes made and their
// prototypes filled, ~0.7 ms and ~80 KB of a cold `task show` or `check`, which read every record
// from a cache and parse none. Our modules' `import * as z from "zod/mini"` gets a stand-in
// instead: a function for each zod function our sources call (`z.object`...), and a proxy for
// each object (`z.iso`), which require a module importing just those from zod/mini (bundled and
// tree-shaken as before, set up by that first require) and pass the call on. A class or a
// constant is not stood in for (a named import of one fails the build), and a module that imports
// zod/mini under another name than `z` fails it too, so nothing half-works at run time. Tests run
// the sources, which import zod itself. Given `lazy` (scripts/cold-group.mjs), the stand-in
// imports that module statically, asks for it as `__LAZY_zod__(<its namespace>)` and records the
// edge: zod's modules then go into a function of the bundle, run at that first call, so a command
// that never calls zod makes none of zod's functions as it loads.
import { join } from "node:path";
import { packageStandIn, sources } from "./stand-in.mjs";

/**
 * `z.<name>` in the sources: what the stand-in offers (types too; only runtime values are kept).
 * A module that names zod/mini otherwise than `z` would read names this does not see: refused.
 */
function namesUsed(dir) {
  const into = new Set();
  for (const [path, text] of sources(dir)) {
    for (const m of text.matchAll(/import\s+(?:type\s+)?\*\s+as\s+(\w+)\s+from\s+"zod\/mini"/g)) {
      if (m[1] !== "z") throw new Error(`${path} imports zod/mini as ${m[1]}: scripts/lazy-zod.mjs looks for z.<name>`);
    }
    for (const m of text.matchAll(/\bz\.([a-z]\w*)/g)) into.add(m[1]);
  }
  return into;
}

export function lazyZod(root, lazy) {
  return packageStandIn(root, lazy, {
    name: "lazy-zod",
    specifier: "zod/mini",
    tag: "zod",
    offered: (real) => {
      // z.core is zod's internals, named in our sources for its types only.
      const used = [...namesUsed(join(root, "src"))].filter((k) => k !== "core" && (typeof real[k] === "function" || (typeof real[k] === "object" && real[k])));
      return { fns: used.filter((k) => typeof real[k] === "function"), objects: used.filter((k) => typeof real[k] !== "function") };
    },
  });
}
