// commander set up on first use, in the bundles (scripts/build.mjs), as minimatch and zod are
// (scripts/lazy-minimatch.mjs, lazy-zod.mjs). The hot bundle reads the plain command lines of its
// hottest verbs without commander (src/cli/fast-line.ts): `task show t1`, `check src/a.ts` and
// `claim t1` never build a program. Declared at the bundle's top, commander's modules were still
// deserialised from every code cache (~29 KB of cache, ~0.5 ms) and set up as the bundle started
// (its classes and its default program made: 0.3-0.45 ms). Our modules' `import { Command } from
// "commander"` gets a stand-in instead: for each class imported, a class whose constructor makes
// the real one and whose `instanceof` asks the real one (a static member is not stood in for:
// none is used). Given `lazy` (scripts/cold-group.mjs), the stand-in asks for a module
// re-exporting those names as `__LAZY_commander__(<its namespace>)`, so commander's modules go
// into a function of the bundle run when the first program is built. Tests run the sources, which
// import commander itself.
import { join } from "node:path";
import { isClass, namesImported, packageStandIn } from "./stand-in.mjs";

export function lazyCommander(root, lazy) {
  return packageStandIn(root, lazy, {
    name: "lazy-commander",
    specifier: "commander",
    tag: "commander",
    offered: (real) => {
      const used = [...namesImported(join(root, "src"), "commander")];
      for (const k of used) if (!isClass(real[k])) throw new Error(`commander's ${k} is no class: scripts/lazy-commander.mjs stands in only for classes`);
      return { classes: used };
    },
  });
}
