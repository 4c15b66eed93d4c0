// `npm run build`: esbuild bundles the entry points into dist/ (one CommonJS file each).
//
// Node builtins that a one-shot command may never use (child_process, zlib, crypto, os, readline,
// tty) are loaded on first call, not when the bundle starts: `child_process` alone pulls in net,
// dgram and the stream modules, a tenth of `node -e 0` again, and `tty` (asked only when a wait
// or a loop handles Ctrl-C) pulls in net and the streams too, ~4 ms of a sync with nothing new;
// while a cold `task show` served from the record cache spawns nothing and inflates nothing. Our
// own modules (and commander, which only spawns for external subcommands) import them through a
// stand-in whose functions require the builtin when first called. Only functions are stood in
// for: an import of anything else (a class, a constant) fails the build, so nothing half-works at
// run time. Other dependencies get the real builtin.
import { build, transform } from "esbuild";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { buildIdentity } from "./build-identity.mjs";
import { groupLazy, groupLazyParts, lazyEdges } from "./cold-group.mjs";
import { besideFiles } from "./lazy-file.mjs";
import { eagerImports } from "./eager-imports.mjs";
import { lazyCommander } from "./lazy-commander.mjs";
import { lazyMinimatch } from "./lazy-minimatch.mjs";
import { lazyOurs } from "./lazy-ours.mjs";
import { lazyZod } from "./lazy-zod.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const identity = buildIdentity(root, version);

const LAZY = ["child_process", "zlib", "crypto", "os", "readline", "tty"];
// What Node passes a CommonJS module, in its order: src/cli/code-cache.ts calls the function with
// those (test/cli-hot-bundle.test.ts checks the built files start and end so).
const BUNDLE_HEAD = "(function (exports, require, module, __filename, __dirname) {";
const BUNDLE_TAIL = "\n})";
const ours = (path) => path.startsWith(join(root, "src") + sep) || path.includes(`${sep}commander${sep}lib${sep}command.js`);

const lazyBuiltins = {
  name: "lazy-builtins",
  setup(b) {
    const filter = new RegExp(`^(node:)?(${LAZY.join("|")})$`);
    b.onResolve({ filter }, (args) => {
      const name = args.path.replace(/^node:/, "");
      if (args.namespace === "lazy-builtin" || !ours(args.importer)) return { path: `node:${name}`, external: true };
      return { path: name, namespace: "lazy-builtin" };
    });
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => {
      const real = require(args.path);
      const fns = Object.keys(real).filter((k) => typeof real[k] === "function" && /^[a-z]/.test(k));
      const lines = [`let m;`, `const get = () => (m ??= require("node:${args.path}"));`];
      for (const f of fns) lines.push(`export function ${f}(...a) { return get().${f}(...a); }`);
      return { contents: lines.join("\n"), loader: "js", resolveDir: root };
    });
  },
};

const common = {
  bundle: true,
  loader: { ".html": "text" },
  platform: "node",
  target: "node20",
  format: "cjs",
  outdir: join(root, "dist"),
  entryNames: "[name]",
  outExtension: { ".js": ".cjs" },
  // The build's identity as constants (src/core/build-identity.ts): `--version` and every agent
  // declaration carry it without a git call or a file read at run time.
  define: { PACKAGE_VERSION: JSON.stringify(version), BUILD_COMMIT: JSON.stringify(identity.commit), BUILD_DIRTY: JSON.stringify(identity.dirty) },
  // Whitespace and syntax minified, names kept (stack traces still name every function): a third
  // less for Node to read and for V8 to check at every start of a one-shot command (hot-main.cjs
  // 736 -> 478 KB; a cold `task show` 2% faster in whole-process timings, interleaved).
  // BUILD_PLAIN=1 keeps them as written: a CPU profile then names lines one can read.
  minifyWhitespace: !process.env.BUILD_PLAIN,
  minifySyntax: !process.env.BUILD_PLAIN,
  // Every character beyond ASCII written as an escape: the loader reads a bundle as latin1 (one
  // byte a character, no UTF-8 decoding: 1.3 ms of a cold command's 5.5 to read hot-main.cjs). Checked below.
  charset: "ascii",
  logLevel: "warning",
  plugins: [lazyBuiltins, lazyZod(root), lazyMinimatch(root), lazyCommander(root), eagerImports(root)],
  // A name a stand-in (lazy builtins, lazy zod, lazy minimatch, lazy commander) does not offer fails the build, not the run.
  logOverride: { "import-is-undefined": "error" },
};

// The dispatcher (the package's bin) and the yaml parser, which bundles require as usual.
await build({ ...common, entryPoints: ["src/cli/git-handoff.ts", "src/store/yaml-bundle.ts"].map((e) => join(root, e)) });

// The bundles the dispatcher loads through its code cache (src/cli/code-cache.ts): each file is one
// function expression, Node's own module wrapper written into it, so V8 compiles the text as read.
// Wrapped at load time instead, a second copy of the whole text was made (~0.5 MB for hot-main), and
// a cold command's allocations then reached the young generation's first collection. Built with
// whitespace kept, so that scripts/cold-group.mjs finds each module's code by the line esbuild
// writes before it and moves the modules only lazy edges reach (the exchange with a sync remote,
// zod) into functions run on first use; then whitespace is minified as the other builds do.
const lazy = lazyEdges();
// The bundles whose lazy groups' code is written into files beside them, `<bundle>-lazy-<group>.cjs`
// (scripts/lazy-file.mjs): the one-shot hot verbs' and the pre-edit hook's, whose plain command
// lines and free edits run none of it. Not the views' (every view line sets commander up: 61
// pairs of `events` and of `status` 0.990x and 0.993x, unresolved) nor the other hooks' (a session
// start sets zod up: 0.991x).
const BESIDE = ["hot-main.cjs", "pre-edit-main.cjs"];
const made = await build({
  ...common,
  entryPoints: ["src/cli/cli-main.ts", "src/cli/hot-main.ts", "src/cli/remote-main.ts", "src/cli/view-main.ts", "src/hooks/hook-main.ts", "src/hooks/pre-edit-main.ts", "src/mcp/mcp-main.ts", "src/dashboard/dashboard-main.ts"].map((e) => join(root, e)),
  plugins: [lazyBuiltins, lazyZod(root, lazy), lazyMinimatch(root, lazy), lazyCommander(root, lazy), lazyOurs(root, lazy), eagerImports(root, lazy)],
  minifyWhitespace: false,
  metafile: true,
  write: false,
  banner: { js: BUNDLE_HEAD },
  footer: { js: BUNDLE_TAIL },
});
// Group files an earlier build wrote (another bundle's, a group since renamed) are no part of this one.
for (const f of readdirSync(join(root, "dist"))) if (/-lazy-\w+\.cjs$/.test(f)) rmSync(join(root, "dist", f));
for (const file of made.outputFiles) {
  const rel = file.path.slice(root.length + 1).split(sep).join("/");
  const output = made.metafile.outputs[rel];
  if (BESIDE.includes(basename(file.path))) {
    const fileOf = (kind) => basename(file.path).replace(/\.cjs$/, `-lazy-${kind}.cjs`);
    const { main, sides } = await besideFiles(groupLazyParts(file.text, made.metafile, output, lazy), fileOf);
    writeFileSync(file.path, await finished(main));
    for (const side of sides) writeFileSync(join(dirname(file.path), side.file), await finished(side.text));
  } else writeFileSync(file.path, await finished(groupLazy(file.text, made.metafile, output, lazy)));
}

/** A bundle's text (the module wrapper around esbuild's output, whitespace kept) as written to dist/. */
async function finished(text) {
  if (!process.env.BUILD_PLAIN) {
    const body = text.slice(BUNDLE_HEAD.length, text.lastIndexOf(BUNDLE_TAIL));
    const min = await transform(body, { loader: "js", minifyWhitespace: true, charset: "ascii", target: "node20" });
    return `${BUNDLE_HEAD}\n${min.code}${BUNDLE_TAIL}\n`;
  }
  // Kept as written, esbuild keeps some comments, whose characters it does not escape: escaped
  // here (strings and patterns are escaped already, and an escape means the same there).
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// src/cli/code-cache.ts reads the bundles as latin1: a byte beyond ASCII would be read wrong.
for (const f of readdirSync(join(root, "dist")).filter((f) => f.endsWith(".cjs"))) {
  const at = readFileSync(join(root, "dist", f)).findIndex((b) => b > 0x7f);
  if (at >= 0) throw new Error(`dist/${f} holds a byte beyond ASCII at ${at}: the bundles are read as latin1`);
}
