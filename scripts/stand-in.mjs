// The text of a stand-in module (scripts/lazy-zod.mjs, lazy-minimatch.mjs, lazy-ours.mjs): each
// name it offers passes its call on to the real module, which `get` (an expression of the lines
// before) returns, set up at that first call. Each stand-in is declared apart and exported under
// the real name: some names are reserved words (zod's `catch`).
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, sep } from "node:path";

/** Each TypeScript source under `dir`, at any depth: its path and text (what a stand-in's names are read from). */
export function* sources(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sources(path);
    else if (e.name.endsWith(".ts")) yield [path, readFileSync(path, "utf8")];
  }
}

/** Whether `v` is a class (what a stand-in offers as a class whose constructor makes the real one). */
export function isClass(v) {
  return typeof v === "function" && /^class\b/.test(Function.prototype.toString.call(v));
}

/** The names our sources import from the package `specifier` (types left out): named imports only. */
export function namesImported(dir, specifier) {
  const into = new Set();
  const from = new RegExp(`^import\\s+(type\\s+)?(.*?)\\s+from\\s+"${specifier.replace(/[/.]/g, "\\$&")}";?$`, "gm");
  for (const [path, text] of sources(dir)) {
    for (const m of text.matchAll(from)) {
      if (m[1]) continue;
      const named = /^\{([^}]*)\}$/.exec(m[2].trim());
      if (!named) throw new Error(`${path}: a stand-in for ${specifier} stands in only for its named imports`);
      for (const n of named[1].split(",").map((s) => s.trim()).filter(Boolean)) if (!n.startsWith("type ")) into.add(n);
    }
  }
  return into;
}

/**
 * `head`: the lines that declare `get`; `fns`: names of functions (a generator's stand-in returns
 * the real one's generator); `classes`: a class whose constructor makes the real one and whose
 * `instanceof` asks the real one; `objects`: a proxy passing each property read on.
 */
export function standInText(head, { fns = [], classes = [], objects = [] }) {
  const lines = [...head];
  for (const k of fns) lines.push(`function standIn_${k}(...a) { return get().${k}(...a); }`);
  for (const k of classes) lines.push(`class standIn_${k} { constructor(...a) { return new (get().${k})(...a); } static [Symbol.hasInstance](x) { return x instanceof get().${k}; } }`);
  for (const k of objects) lines.push(`const standIn_${k} = /* @__PURE__ */ new Proxy({}, { get: (_, p) => get().${k}[p] });`);
  for (const k of [...fns, ...classes, ...objects]) lines.push(`export { standIn_${k} as ${k} };`);
  return lines.join("\n");
}

/**
 * An esbuild plugin standing in for the package `specifier` where our sources (src/) import it:
 * they get a stand-in whose names (`offered(real)`, the package's namespace: `{ fns, classes,
 * objects }`) pass each call on to a module exporting just those from the package (bundled and
 * tree-shaken as before), set up at the first call. Given `lazy` (scripts/cold-group.mjs), that
 * module is asked for as `__LAZY_<tag>__(<its namespace>)` and the edge recorded, so the package's
 * modules go into a function of the bundle run then; else it is required then.
 */
export function packageStandIn(root, lazy, { name, specifier, tag, offered }) {
  const require = createRequire(join(root, "package.json"));
  const ours = (path) => path.startsWith(join(root, "src") + sep);
  const filter = new RegExp(`^${specifier.replace(/[/.]/g, "\\$&")}$`);
  return {
    name,
    setup(b) {
      b.onResolve({ filter }, (args) => (ours(args.importer) ? { path: "stand-in", namespace: name } : undefined));
      b.onResolve({ filter: /^used$/, namespace: name }, () => ({ path: "used", namespace: name }));
      b.onLoad({ filter: /.*/, namespace: name }, async (args) => {
        const real = await import(require.resolve(specifier));
        const { fns = [], classes = [], objects = [] } = offered(real);
        const used = [...fns, ...classes, ...objects].sort();
        if (args.path === "used") return { contents: `export { ${used.join(", ")} } from ${JSON.stringify(specifier)};`, loader: "js", resolveDir: root };
        lazy?.add(`${name}:stand-in`, `${name}:used`, tag);
        const head = lazy ? [`import * as used from "used";`, `let m;`, `const get = () => (m ??= __LAZY_${tag}__(used));`] : [`let m;`, `const get = () => (m ??= require("used"));`];
        return { contents: standInText(head, { fns, classes, objects }), loader: "js", resolveDir: root };
      });
    },
  };
}
