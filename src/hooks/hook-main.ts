// `git handoff hook <name>`: the bundle that runs before every agent edit and every commit. It
// loads neither commander nor the MCP SDK. A hook that fails unexpectedly fails open (the edit or
// commit goes on, a warning is printed) unless the mode is strict; a watchdog bounds its time.
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { HandoffError } from "../core/errors.ts";
import { currentDir, resolveDir } from "../git/repo.ts";
import type { Store } from "../store/store.ts";
import { openSyncedStore } from "../sync/open.ts";
import { afterToolAnswer, editIntent, formatAnswer } from "./agents.ts";
import { AFTER_HOOKS, AGENT_HOOKS, HOOK_NAMES, SESSION_HOOKS } from "./hook-names.ts";
import { RECORD_CATCH, recordHookCatch, writePendingCatches } from "./catch-record.ts";
import { refreshFastCache } from "./fast-cache.ts";
import { checkEdit } from "./edit-check.ts";
import { contextAdditions, recordAdditions, type ContextAdditions } from "./drift-notice.ts";
import { preCommit, prePush } from "./git-hooks.ts";
import { sessionContext } from "./session-start.ts";
import { agentForPayload, registerSession } from "./session-seam.ts";
import { parsePayload, readStdin } from "./stdin.ts";
import { mark } from "./profile.ts";
import { stderr, stdout } from "./write-out.ts";
import { neutralise } from "../present/untrusted.ts";

mark("bundle loaded");


interface Invocation {
  name: string;
  args: string[];
  dir: string;
  agent: string | undefined;
}

function parseArgs(argv: string[]): Invocation {
  // A current folder removed under the agent: the payload's cwd, or not_a_repo when the store opens.
  let dir = "";
  try {
    dir = currentDir();
  } catch {
    /* dir stays empty */
  }
  let agent: string | undefined;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-C") dir = dir ? resolve(dir, argv[++i] ?? ".") : resolveDir(argv[++i] ?? ".");
    else if (a === "--agent") agent = argv[++i];
    else if (a.startsWith("--agent=")) agent = a.slice(8);
    else words.push(a);
  }
  const at = words.indexOf("hook");
  return { name: words[at + 1] ?? "", args: words.slice(at + 2), dir, agent };
}

/** Budget for a whole hook run; past it the hook answers as on an unexpected failure. */
function budgetMs(): number {
  const n = Number(process.env.HANDOFF_HOOK_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : 5000;
}

/** When the watchdog's budget started (main sets it): the payload's budget counts from then too. */
let budgetStart = Date.now();

/**
 * Reading the payload may take most of the budget, leaving time to answer: 80% of it, counted from
 * the watchdog's start. Counted from the read's own start, a loaded machine that took a fifth of
 * the budget to get there had the watchdog answer first ("timed out") instead of this read's
 * clearer "no end of input on stdin".
 */
function stdinBudget(): number {
  return Math.max(1, Math.floor(budgetMs() * 0.8) - (Date.now() - budgetStart));
}

/** Whether failures block: the configured mode, or, when the config itself is broken, what it says. */
function strictMode(store: Store | null, dir: string): boolean {
  if (store) return store.config.mode === "strict";
  try {
    const root = findRoot(dir);
    return /^mode:\s*["']?strict\b/m.test(readFileSync(`${root}/.handoff.yaml`, "utf8"));
  } catch {
    return false;
  }
}

function findRoot(dir: string): string {
  let d = dir;
  for (let i = 0; i < 64; i++) {
    try {
      readFileSync(`${d}/.handoff.yaml`);
      return d;
    } catch {
      const up = resolve(d, "..");
      if (up === d) break;
      d = up;
    }
  }
  return dir;
}

function out(text: string): void {
  if (text) stdout(text);
}

function warn(text: string): void {
  stderr(`git-handoff: ${text}\n`);
}

/** The answer for a failed hook: open (proceed with a warning) or closed (block with the reason). */
function failureAnswer(name: string, message: string, strict: boolean): number {
  const kind = AGENT_HOOKS[name];
  const text = strict
    ? `git-handoff could not check this (${message}); mode is strict, so it is blocked. Fix the problem or ask a person.`
    : `git-handoff could not check this (${message}); proceeding (fail-open).`;
  warn(strict ? `${message} (strict mode: blocking)` : `warning: ${message} (failing open)`);
  if (kind) {
    const a = formatAnswer(kind, { decision: strict ? "deny" : "allow", text });
    out(a.stdout);
    return a.code;
  }
  if (SESSION_HOOKS.includes(name) || AFTER_HOOKS.includes(name)) return 0; // context only: never blocks
  return strict ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  // `hook --help` never comes here: the dispatcher sends it to the CLI's help (commands/hook.ts).
  const inv = parseArgs(argv);
  if (inv.name === RECORD_CATCH) {
    // The detached writer of a hook's catch events (catch-record.ts): nobody waits for it.
    const store = await openSyncedStore({ cwd: inv.dir });
    try {
      await writePendingCatches(store, inv.args[0] ?? "");
    } finally {
      store.close();
    }
    return 0;
  }
  if (!HOOK_NAMES.includes(inv.name)) {
    warn(`unknown hook ${JSON.stringify(inv.name)}; hooks: ${HOOK_NAMES.join(", ")}`);
    return 2;
  }
  let store: Store | null = null;
  let settled = false;
  budgetStart = Date.now();
  const watchdog = setTimeout(() => {
    if (settled) return;
    settled = true;
    const code = failureAnswer(inv.name, `timed out after ${budgetMs()} ms`, strictMode(store, inv.dir));
    process.exit(code);
  }, budgetMs());
  watchdog.unref();
  try {
    const code = await dispatch(inv, (s) => (store = s), () => (settled = true));
    settled = true;
    return code;
  } catch (e) {
    if (settled) return 0;
    settled = true;
    // An agent working outside any git repository is none of our business: no noise in its context.
    if (e instanceof HandoffError && e.code === "not_a_repo" && AGENT_HOOKS[inv.name]) {
      warn(`not in a git repository; not checked (${e.message})`);
      return 0;
    }
    const message = e instanceof HandoffError ? e.message : `unexpected error: ${(e as Error)?.message ?? String(e)}`;
    if (!(e instanceof HandoffError) && process.env.HANDOFF_DEBUG) stderr(`${(e as Error)?.stack}\n`);
    return failureAnswer(inv.name, message, strictMode(store, inv.dir));
  } finally {
    clearTimeout(watchdog);
    (store as Store | null)?.close();
  }
}

/** The nearest existing folder of the first absolute path, or null. */
function folderOf(paths: string[]): string | null {
  const abs = paths.find((p) => isAbsolute(p));
  if (!abs) return null;
  for (let d = dirname(abs); ; d = dirname(d)) {
    try {
      if (statSync(d).isDirectory()) return d;
    } catch {
      /* not there yet: its parent */
    }
    if (dirname(d) === d) return null;
  }
}

/** `answered`: the answer is out; logging the catch afterwards must not let the watchdog answer again. */
async function dispatch(inv: Invocation, opened: (s: Store) => void, answered: () => void): Promise<number> {
  const open = async (dir: string, agent: string | undefined) => {
    const s = await openSyncedStore({ cwd: dir, ...(agent !== undefined ? { agent } : {}) });
    opened(s);
    return s;
  };
  const kind = AGENT_HOOKS[inv.name];
  if (kind) {
    const payload = parsePayload(await readStdin(stdinBudget()), inv.name);
    mark("stdin read");
    const intent = editIntent(kind, payload);
    if (!intent.paths.length) return 0; // not an edit: nothing to say
    let dir = intent.cwd ?? process.env.CLAUDE_PROJECT_DIR ?? inv.dir;
    let store: Store;
    let result: Awaited<ReturnType<typeof checkEdit>>;
    try {
      const agent = inv.agent ?? agentForPayload(payload, process.env);
      store = await open(dir, agent).catch(async (e: unknown) => {
        // An agent started outside the repository (its cwd `/`, or a folder gone) that edits a file
        // in one by its absolute path: that file's repository judges the edit, not nobody.
        const other = e instanceof HandoffError && e.code === "not_a_repo" ? folderOf(intent.paths) : null;
        if (other === null || other === dir) throw e;
        // Not in a repository either: the first refusal says why (a folder gone, say).
        const s = await open(other, agent).catch(() => Promise.reject(e));
        dir = other;
        return s;
      });
      mark("store opened");
      result = await checkEdit(store, intent.paths, dir, { shell: intent.shell });
    } catch (e) {
      if (!intent.shell) throw e;
      // A word scan only ever warns: not even strict mode blocks a command over a failed one.
      warn(`shell command not checked (${e instanceof HandoffError ? e.message : (e as Error)?.message}); proceeding`);
      return 0;
    }
    mark("checked");
    // Drift from the declaration and release requests: context only, never a block.
    const extra: ContextAdditions = intent.shell || result.decision === "deny" ? { text: "", events: [] } : await contextAdditions(store, result);
    const a = formatAnswer(kind, extra.text ? { ...result, text: [result.text, extra.text].filter(Boolean).join("\n") } : result);
    out(a.stdout);
    mark("answered");
    answered();
    await recordHookCatch(store, inv.name, result.answers);
    await recordAdditions(store, extra);
    // The fast path (git-hooks/fast-hook.sh) answers the next edits from what this run saw.
    await refreshFastCache(store);
    mark("cache refreshed");
    return a.code;
  }
  if (AFTER_HOOKS.includes(inv.name)) {
    const payload = parsePayload(await readStdin(stdinBudget()), inv.name);
    const intent = editIntent("gemini", payload);
    if (!intent.paths.length) return 0;
    const dir = intent.cwd ?? process.env.GEMINI_PROJECT_DIR ?? inv.dir;
    const store = await open(dir, inv.agent ?? agentForPayload(payload, process.env));
    const result = await checkEdit(store, intent.paths, dir, { shell: intent.shell, readOnly: true });
    out(afterToolAnswer(result.text).stdout);
    answered();
    await refreshFastCache(store);
    return 0;
  }
  if (SESSION_HOOKS.includes(inv.name)) {
    const payload = parsePayload(await readStdin(stdinBudget()), inv.name);
    const dir = (typeof payload.cwd === "string" && payload.cwd) || process.env.CLAUDE_PROJECT_DIR || process.env.GEMINI_PROJECT_DIR || inv.dir;
    const store = await open(dir, inv.agent ?? agentForPayload(payload, process.env));
    const note = await registerSession(store, payload);
    const context = [await sessionContext(store), ...(note ? [note] : [])].join("\n");
    // The context quotes shared records (objectives, names, paths): escaped like every text answer.
    out(JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: neutralise(context) } }) + "\n");
    return 0;
  }
  if (inv.name === "pre-commit") {
    const store = await open(inv.dir, inv.agent);
    const r = await preCommit(store, inv.dir);
    if (r.text) stderr(r.text + "\n");
    if (r.verdict === "deny") warn("commit refused: staged files are inside another agent's exclusive lease (see above)");
    answered();
    await recordHookCatch(store, inv.name, r.answers);
    await refreshFastCache(store);
    return r.verdict === "deny" ? 1 : 0;
  }
  // pre-push: git passes the remote name and url, and the refs on stdin.
  const stdin = await readStdin(stdinBudget());
  const store = await open(inv.dir, inv.agent);
  const r = await prePush(store, stdin, inv.args[0]);
  if (r.verdict === "deny") {
    stderr(r.text + "\n");
    warn("push refused: the pushed commits touch files inside another agent's exclusive lease, or work for a task whose lease is no longer yours (see above)");
    answered();
    await recordHookCatch(store, inv.name, r.answers.filter((x) => x.verdict === "deny" && x.holders.some((h) => h.exclusive)));
    return 1;
  }
  return 0;
}

/**
 * Exits as soon as the answer is written (synchronously, see write-out.ts): a stdin read left
 * blocked after a timeout, or a git child, must not keep an agent waiting.
 */
export function run(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (e) => {
      warn(`unexpected error: ${(e as Error)?.message ?? String(e)} (failing open)`);
      process.exit(0);
    },
  );
}
