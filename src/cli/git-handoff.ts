#!/usr/bin/env node
// Entry point: a dispatcher that loads only the bundle a verb needs. Hooks run before every edit
// an agent makes, so they must not pay for commander, the MCP SDK or the dashboard; the hot verbs
// (claim, check, task show...) load a bundle without the other verbs' modules.
import { existsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { hungUp } from "../present/hung-up.ts";
import { finishesWithoutReader } from "../present/reader-gone.ts";
import { loadBundle } from "./code-cache.ts";
import { cacheVariant, HOT_VERBS, REMOTE_VERBS, VIEW_VERBS, verbOf } from "./command-line.ts";
import { VERSION_LINE } from "./version.ts";
import { AGENT_HOOKS, hookWords } from "../hooks/hook-names.ts";

const BUNDLES = new Map<string, string>([
  ["hook", "hook-main.cjs"],
  ["mcp", "mcp-main.cjs"],
  ...REMOTE_VERBS.map((v): [string, string] => [v, "remote-main.cjs"]),
  ...VIEW_VERBS.map((v): [string, string] => [v, "view-main.cjs"]),
  ...HOT_VERBS.map((v): [string, string] => [v, "hot-main.cjs"]),
]);

// Errors of the stdout stream (what writes through process.stdout, not present/output.ts's
// write(2)): a reader that stops early (`git handoff status | head`) closes the pipe, and a
// terminal that hung up (EIO on a terminal: its window closed, the ssh connection dropped) is
// gone too, so end quietly with the status the command has so far (a refusal keeps its code,
// an interrupted wait its 130), unless the verb finishes its own work first (reader-gone.ts: the
// MCP server pushing its queued writes); a write that fails otherwise (a full disk) is one line
// and the machine's status (5), never a stack trace.
function onStdoutError(e: NodeJS.ErrnoException): void {
  if (e.code === "EPIPE" || (e.code === "EIO" && hungUp(1))) {
    if (finishesWithoutReader()) return;
    process.exit(Number(process.exitCode ?? 0));
  }
  try {
    writeSync(2, `git-handoff: the output could not be written: ${e.message}\n`);
  } catch {
    /* stderr is gone too */
  }
  process.exit(5);
}
// Set on process.stdout when something first builds it: building it here would load the stream
// modules for every command, though output is written with write(2) (present/output.ts).
const stdoutGetter = Object.getOwnPropertyDescriptor(process, "stdout")?.get;
if (stdoutGetter) {
  let hooked = false;
  Object.defineProperty(process, "stdout", {
    configurable: true,
    enumerable: true,
    get() {
      const out = stdoutGetter.call(process) as NodeJS.WriteStream;
      if (!hooked) (hooked = true), out.on("error", onStdoutError);
      return out;
    },
  });
} else process.stdout.on("error", onStdoutError);

let argv = process.argv.slice(2);
// `git handoff --version` alone (scripts and agent set-ups ask it to see the tool is there): the
// answer commander would print, without loading any bundle (it cost what a claim does). With
// --json it is the `version` verb's JSON, which asks git its version.
const asksVersion = (a: string) => a === "--version" || a === "-V";
if (argv.some(asksVersion) && argv.every((a) => asksVersion(a) || a === "--json")) {
  if (argv.includes("--json")) argv = ["version", "--json"];
  else {
    try {
      writeSync(1, `${VERSION_LINE}\n`);
    } catch {
      /* a reader that went away (EPIPE): nothing to say to it */
    }
    process.exit(0);
  }
}
/** Whether argv runs an agent's pre-edit hook: that hook, run before every edit, has a bundle of its own. */
const preEditHook = (argv: string[]): boolean => Object.hasOwn(AGENT_HOOKS, hookWords(argv).name);
const verb = verbOf(argv);
// `hook --help` and `mcp --help` are answered by the CLI's own help, as `help hook` is: their
// bundles have no commander, and the texts they kept of their own had drifted from it.
const asksHelp = (verb === "hook" || verb === "mcp") && (argv.includes("--help") || argv.includes("-h"));
const special = verb !== undefined && !asksHelp ? (verb === "hook" && preEditHook(argv) ? "pre-edit-main.cjs" : BUNDLES.get(verb)) : undefined;
const bundle = special && existsSync(join(__dirname, special)) ? special : "cli-main.cjs";
// `help claim` runs what `claim --help` does: help's own cache, whatever it names.
(loadBundle(join(__dirname, bundle), cacheVariant(argv)) as { run(argv: string[]): void }).run(argv);
