// The modules a bundle reaches only across a lazy edge, written inside a function of the bundle
// that runs on first use (scripts/build.mjs). Two kinds of lazy edge: our dynamic imports (made
// static by scripts/eager-imports.mjs) and zod behind scripts/lazy-zod.mjs's stand-in.
//
// V8 compiles a bundle's function as it is loaded, and makes a SharedFunctionInfo for every
// function declared at the bundle's top (esbuild hoists every module's functions there); as the
// function runs, it makes a closure of each. The code cache holds every one of them, and a cold
// command deserialises all and makes the closures before its first line runs. A function declared
// inside a function that has not run is neither: V8 has only pre-parsed it. So the modules only a
// sync remote or a record read from git reach (the exchange with a remote; zod) are written inside
// a function per kind, which runs their top-level statements the first time an edge of that kind
// is taken, as the sources' dynamic imports do. Their code reaches the other modules' bindings as
// closures of the bundle's function: one bundle, one scope, no getters.
//
// How: a plugin writes a lazy edge as `__LAZY_<kind>__(namespace)`, an unbound name esbuild leaves
// as it is, and tells `lazyEdges` which import it is. The bundle is built with whitespace kept, so
// that esbuild's `// <path>` line before each module's code marks where it starts. A module is
// lazy when the entry reaches it only across edges of one kind (a module that edges of two kinds
// reach stays at the top, and so does all it imports). Its code moves into its kind's function, in
// esbuild's order. An `imports` edge becomes a promise of the namespace, taken in a later microtask
// as a dynamic import is; a `zod` edge is the namespace itself (the stand-in calls it when a zod
// function is first called). Whitespace is minified afterwards (scripts/build.mjs).

/** The lazy edges the plugins made: importer -> target -> kind (paths as the metafile names them). */
export function lazyEdges() {
  const edges = new Map();
  return {
    edges,
    add(importer, target, kind) {
      if (!edges.has(importer)) edges.set(importer, new Map());
      edges.get(importer).set(target, kind);
    },
  };
}

/** Each module's static imports, without the one import a lazy edge stands for. */
function staticImports(meta, f, lazy) {
  const counts = new Map();
  for (const i of meta.inputs[f]?.imports ?? []) if (!i.external) counts.set(i.path, (counts.get(i.path) ?? 0) + 1);
  // The plugin writes one import per lazy edge; a second import of the same module is static too.
  return [...counts].filter(([path, n]) => !(lazy.edges.get(f)?.has(path) && n === 1)).map(([path]) => path);
}

/**
 * Each module of the output: "" for the top, else the kind of the function it goes into. Walked on
 * the whole import graph: a module esbuild left out of the output (all of it shaken) may still be
 * how the output's modules are reached.
 */
export function placeModules(meta, output, lazy) {
  const reach = (from, into, across = false) => {
    const stack = [...from];
    while (stack.length) {
      const f = stack.pop();
      if (into.has(f)) continue;
      into.add(f);
      stack.push(...staticImports(meta, f, lazy), ...(across ? [...(lazy.edges.get(f)?.keys() ?? [])] : []));
    }
    return into;
  };
  const all = reach([output.entryPoint], new Set(), true);
  const top = reach([output.entryPoint], new Set());
  for (;;) {
    const kinds = new Map();
    for (const [from, targets] of lazy.edges) {
      if (!all.has(from)) continue;
      for (const [target, kind] of targets) {
        for (const f of reach([target], new Set())) if (!top.has(f)) (kinds.get(f) ?? kinds.set(f, new Set()).get(f)).add(kind);
      }
    }
    const mixed = [...kinds].filter(([, k]) => k.size > 1).map(([f]) => f);
    if (!mixed.length) {
      const lost = Object.keys(output.inputs).find((f) => !top.has(f) && !kinds.has(f));
      if (lost) throw new Error(`${output.entryPoint}: ${lost} is reached neither from the entry nor across a lazy edge`);
      return new Map(Object.keys(output.inputs).map((f) => [f, top.has(f) ? "" : [...kinds.get(f)][0]]));
    }
    reach(mixed, top);
  }
}

const MODULE_LINE = /^\/\/ (\S+)\n/gm;
const EDGE = /__LAZY_(\w+?)__\((\w+)\)/g;

/**
 * The bundle's text (esbuild's, whitespace kept, the module wrapper's `\n})` last) with its lazy
 * modules moved into their functions. `output` is the bundle's entry in the metafile.
 */
export function groupLazy(text, meta, output, lazy) {
  const { top, groups, tail } = groupLazyParts(text, meta, output, lazy);
  return top + groups.map(({ kind, body }) => groupFunctions(kind, body)).join("") + tail;
}

/**
 * The functions a group is asked for by: `__lazy_<kind>()` runs `__lazy_<kind>Run` (whose body is
 * `run`) once and keeps what it returned. scripts/lazy-file.mjs writes the same with a `run` that
 * reads the group's file.
 */
export function groupFunctions(kind, run) {
  const fn = groupFn(kind);
  return `var ${fn}Made;\nfunction ${fn}() {\n  return ${fn}Made ??= ${fn}Run();\n}\nfunction ${fn}Run() {\n${run}}\n`;
}

/**
 * groupLazy's pieces: the text at the bundle's top, each kind's body (its modules' code, then the
 * namespaces the others ask for returned), and the module wrapper's end (scripts/lazy-file.mjs
 * writes the bodies into a file of their own).
 */
export function groupLazyParts(text, meta, output, lazy) {
  const place = placeModules(meta, output, lazy);
  const marks = [...text.matchAll(MODULE_LINE)].filter((m) => place.has(m[1]));
  const end = text.lastIndexOf("\n})");
  if (end < 0) throw new Error(`${output.entryPoint}: no module wrapper's end`);
  // The text in runs: [start, stop, kind] ("" for the top).
  const runs = [[0, marks.length ? marks[0].index : end, ""]];
  marks.forEach((m, k) => runs.push([m.index, k + 1 < marks.length ? marks[k + 1].index : end, place.get(m[1])]));
  // Where each namespace is declared (esbuild: `var x_exports = {};` where its module starts).
  const home = new Map();
  for (const [a, b, kind] of runs) for (const m of text.slice(a, b).matchAll(/^var (\w+) = \{\};$/gm)) home.set(m[1], kind);
  const asked = new Map();
  const edge = (from) => (_, kind, name) => {
    const at = home.get(name);
    if (at === undefined) throw new Error(`${output.entryPoint}: a lazy edge to ${name}, which no module declares`);
    const value = at === "" || at === from ? name : `${groupFn(at)}().${name}`;
    if (value !== name) (asked.get(at) ?? asked.set(at, new Set()).get(at)).add(name);
    if (kind === "imports") return value === name ? `Promise.resolve(${name})` : `Promise.resolve().then(() => ${value})`;
    return value;
  };
  const parts = new Map([["", []]]);
  for (const [a, b, kind] of runs) (parts.get(kind) ?? parts.set(kind, []).get(kind)).push(text.slice(a, b).replace(EDGE, edge(kind)));
  const groups = [...parts].filter(([kind]) => kind !== "").map(([kind, texts]) => ({ kind, body: `${texts.join("")}  return { ${[...(asked.get(kind) ?? [])].join(", ")} };\n` }));
  return { top: parts.get("").join(""), groups, tail: text.slice(end) };
}

export const groupFn = (kind) => `__lazy_${kind}`;
