// Our modules' dynamic imports of each other, made static in the bundles (scripts/build.mjs).
// Inside one bundle, `await import("./remote-cas.ts")` defers only the top-level statements of the
// module it names: esbuild declares every module's functions at the bundle's start either way. But
// a module that is imported dynamically is wrapped in an initialiser (`__esm`), and so is every
// module it imports, which was nearly all of ours (227 in each bundle): each wrapper is an object,
// two closures and a context made as the bundle loads, and a call to run it. That was ~58 KB of
// the young generation's first megabyte in a cold `task show` (392 KB of module init -> 334) and
// 30 KB of each bundle's text. So `import("./x.ts")` becomes `Promise.resolve(<x's namespace>)`
// with a static `import * as` of x: every await stays where it was, and x's top-level statements
// run as the bundle loads. Given `lazy` (scripts/cold-group.mjs), the import is written
// `__LAZY_imports__(<x's namespace>)` and recorded as a lazy edge instead: the modules only such
// edges reach then go into a function of the bundle run on first use, and the edge becomes a
// promise of the namespace again. Tests run the sources, which import dynamically as written.
import { readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";

/** `import("./x.ts")` or `import("../y/x.ts")` in code (not a type, not a comment): our own modules. */
const DYNAMIC = /(?<!typeof\s*)\bimport\(("\.\.?\/[^"]+\.ts")\)/g;

export function eagerImports(root, lazy) {
  return {
    name: "eager-imports",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (!args.path.startsWith(join(root, "src") + sep)) return undefined;
        const text = await readFile(args.path, "utf8");
        if (!text.includes('import("')) return undefined;
        const heads = [];
        const names = new Map();
        const lines = text.split("\n").map((line) => {
          if (/^\s*(\/\/|\*|\/\*)/.test(line)) return line;
          return line.replace(DYNAMIC, (_, spec) => {
            if (!names.has(spec)) names.set(spec, `eager_import_${names.size}`), heads.push(`import * as ${names.get(spec)} from ${spec};`);
            lazy?.add(relative(process.cwd(), args.path), relative(process.cwd(), resolve(dirname(args.path), JSON.parse(spec))), "imports");
            return lazy ? `__LAZY_imports__(${names.get(spec)})` : `Promise.resolve(${names.get(spec)})`;
          });
        });
        if (!heads.length) return undefined;
        // After a first line that is a shebang (the dispatcher's), which must stay first.
        const at = lines[0]?.startsWith("#!") ? 1 : 0;
        lines.splice(at, 0, ...heads);
        return { contents: lines.join("\n"), loader: "ts", resolveDir: dirname(args.path) };
      });
    },
  };
}
