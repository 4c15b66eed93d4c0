// The lazy groups' code (scripts/cold-group.mjs) in a file of its own beside the bundle, read the
// first time a group is asked for (scripts/build.mjs names the bundles written so).
//
// Inside a function of the bundle, a group's code was still text the bundle's file carried: read,
// copied into a string and held at every start though a plain command line runs none of it
// (hot-main.cjs: 363 of 685 KB; a build without it ran a cold `task show` ~0.8 ms faster in CPU).
// The groups' code reaches the bundle's top-level names as closures of one scope. In a file of its
// own it gets them as the parameters of a function the bundle calls once, with the values those
// names hold then: sound only for names that never change after their declaration ran, which the
// build proves for every name the groups read, by esbuild's own scope analysis:
// - which top-level names the groups' code can see: each word of the groups' text declared again
//   with `let` after the bundle's top, and esbuild says which are declared twice (and where);
// - which of those it reads: the groups' text as a module importing all of them, transformed to
//   CommonJS, where each real reference (not a local of the same name) becomes `import_x.name`;
// - that none of those is ever assigned but at its declaration: the whole bundle again, those
//   declarations renamed, the names imported instead, and any assignment to one is esbuild's
//   `assign-to-import` warning. The build fails on one.
// And the groups are asked for only after the bundle's top-level statements have all run (each
// declaration with its value): asked for earlier, the bundle throws rather than hand a group a
// name before its value.
// The groups' text goes into the files as it was (esbuild's output above is only read, never
// written: it renames locals); a file is loaded through the same code cache as the bundle
// (src/cli/code-cache.ts `loadBeside`), a cache per verb as the bundle's. A file per group, not
// one for all: a claim in a lease set past LEASE_TREE_AT sets the lease tree up at every start,
// and a line left to commander sets up commander and the hot program, each a tenth of the groups'
// text or less (one file of them all made such a claim 2% slower than the bundle holding them).
import { transform } from "esbuild";
import { createHash } from "node:crypto";
import { groupFn, groupFunctions } from "./cold-group.mjs";

const HEAD = "(function (exports, require, module, __filename, __dirname) {";
const PARAMS = ["exports", "require", "module", "__filename", "__dirname"];
// Words that cannot be declared with `let` in a strict function (none is a name of the bundle's top).
const RESERVED = new Set(
  "break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await arguments eval".split(" "),
);
const body = (kind) => `${groupFn(kind)}Body`;

/** The offset of each line's start in `text`, for esbuild's (line, column) locations. */
function lineStarts(text) {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** Which of `words` the bundle's top (`main`, a function's body after HEAD) declares, and where. */
async function declaredAtTop(main, tail, words) {
  const declared = new Map();
  const starts = lineStarts(main);
  try {
    await transform(`${main}\n${[...words].map((w) => `let ${w};`).join("\n")}${tail}`, { loader: "js", logLevel: "silent", logLimit: 0 });
  } catch (e) {
    for (const err of e.errors ?? [e]) {
      const m = /^The symbol "([\w$]+)" has already been declared$/.exec(err.text ?? "");
      const at = err.notes?.[0]?.location;
      if (!m || !at) throw new Error(`lazy-file: probing the bundle's top-level names: ${err.text ?? e}`);
      declared.set(m[1], starts[at.line - 1] + at.column);
    }
  }
  return declared;
}

/** The names of `top` the groups' code really reads (not a local of the same name). */
async function readByGroups(groupsText, top) {
  const { code } = await transform(`import { ${top.join(", ")} } from "bundle-top";\n${groupsText}`, { loader: "js", format: "cjs", logLevel: "silent" });
  return [...new Set([...code.matchAll(/\bimport_bundle_top\.([\w$]+)/g)].map((m) => m[1]))].sort();
}

/** The names of `read` something assigns other than at their declaration (`declared`: where each is declared in `whole`). */
async function assignedLater(whole, tail, read, declared) {
  let text = whole;
  const own = read.filter((n) => !PARAMS.includes(n)).sort((a, b) => declared.get(b) - declared.get(a));
  for (const n of own) {
    const p = declared.get(n);
    if (text.slice(p, p + n.length) !== n) throw new Error(`lazy-file: ${n} is not declared at ${p}`);
    text = `${text.slice(0, p)}${n}__declared${text.slice(p + n.length)}`;
  }
  if (!text.startsWith(HEAD)) throw new Error("lazy-file: the bundle does not start with the module wrapper");
  text = `(function (${PARAMS.map((p) => `${p}__declared`).join(", ")}) {${text.slice(HEAD.length)}`;
  // Declared once each: renamed, none of them may still be declared at the top (a second `var`).
  const again = await declaredAtTop(text, tail, read);
  if (again.size) throw new Error(`lazy-file: declared more than once at the bundle's top: ${[...again.keys()].join(", ")}`);
  const { warnings } = await transform(`import { ${read.join(", ")} } from "bundle-top";\n${text}${tail}`, { loader: "js", format: "esm", logLevel: "silent", logLimit: 0 });
  return [...new Set(warnings.filter((w) => w.id === "assign-to-import").map((w) => /"([\w$]+)"/.exec(w.text)[1]))];
}

/**
 * The bundle without its groups' code, and a file beside it for each group holding that group's
 * code. `parts` is scripts/cold-group.mjs groupLazyParts's; `fileOf(kind)` names a group's file
 * (in the bundle's folder).
 */
export async function besideFiles({ top, groups, tail }, fileOf) {
  const fnText = ({ kind, body: text }) => `function ${body(kind)}() {\n${text}}\n`;
  // The files are read long after the bundle (a `done` waits for its verify command): one written
  // by another build meanwhile (an npm install, a build, half done) would take another build's
  // names in its parameters' places. Each file carries its build's stamp, which the bundle checks.
  const stamp = createHash("sha256").update(top).update(JSON.stringify(groups)).update(tail).digest("hex").slice(0, 16);
  const words = new Set([...groups.map(fnText).join("").matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => m[0]).filter((w) => !RESERVED.has(w)));
  // Each group run from its file, given the top-level names it reads (`reads`: kind -> names).
  const loader = (reads) =>
    `var __lazy_topDone = true;\n` +
    groups.map(({ kind: k }) => groupFunctions(k, `  return __lazy_beside(${JSON.stringify(fileOf(k))})(${(reads.get(k) ?? []).join(", ")});\n`)).join("") +
    `function __lazy_beside(file) {\n  if (!__lazy_topDone) throw new Error("a lazy group was asked for before the bundle's top had run");\n` +
    // Loaded by another loader than src/cli/code-cache.ts (a test's, a tool's): the file compiled as read, without a code cache.
    `  let made;\n  try {\n  if (!module.loadBeside) {\n    const path = require("node:path").join(__dirname, file), side = { exports: {} };\n` +
    `    require("node:vm").runInThisContext(require("node:fs").readFileSync(path, "latin1"), { filename: path })(side.exports, require, side, path, __dirname);\n    made = side.exports;\n  } else made = module.loadBeside(file);\n` +
    // A half-made install (a file left out of a copy, a build stopped half way): one clear line, not ENOENT's stack.
    `  } catch (e) {\n    if (e && e.code === "ENOENT") throw new Error(\`\${file} is missing beside \${__filename}: reinstall git-handoff (or npm run build)\`);\n    throw e;\n  }\n` +
    `  if (made.build !== ${JSON.stringify(stamp)}) throw new Error(\`\${file} is of another build than \${__filename}: reinstall git-handoff (or npm run build)\`);\n  return made;\n}\n`;
  const declared = await declaredAtTop(top + loader(new Map()), tail, words);
  const reads = new Map();
  for (const g of groups) reads.set(g.kind, await readByGroups(`export ${fnText(g)}`, [...declared.keys()]));
  const read = [...new Set([...reads.values()].flat())].sort();
  for (const g of groups) if (read.includes(body(g.kind))) throw new Error(`lazy-file: ${body(g.kind)} is a name of the bundle's top`);
  // Where each is declared in the bundle as written (the loader's calls now name what each group reads).
  const at = await declaredAtTop(top + loader(reads), tail, read);
  const later = await assignedLater(top + loader(reads) + groups.map(fnText).join(""), tail, read, at);
  if (later.length) throw new Error(`lazy-file: the lazy groups read names the bundle assigns after their declaration: ${later.join(", ")}`);
  const sides = groups.map(({ kind, body: text }) => ({
    kind,
    file: fileOf(kind),
    text: `${HEAD}\n"use strict";\nmodule.exports = function ${body(kind)}(${reads.get(kind).join(", ")}) {\n${text}};\nmodule.exports.build = ${JSON.stringify(stamp)};${tail}`,
    read: reads.get(kind),
  }));
  return { main: top + loader(reads) + tail, sides };
}
