// What every hook bundle shares around its answer (hook-main.ts serves every hook, pre-edit-main.ts
// only the pre-edit ones): the command line, a watchdog bounding the run, and the answer for a hook
// that fails unexpectedly: open (the edit or commit goes on, a warning is printed) unless the mode
// is strict.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { HandoffError } from "../core/errors.ts";
import { currentDir, resolveDir } from "../git/repo.ts";
import type { Store } from "../store/store.ts";
import { formatAnswer } from "./agents.ts";
import { AFTER_HOOKS, AGENT_HOOKS, hookWords, SESSION_HOOKS } from "./hook-names.ts";
import { stderr, stdout } from "./write-out.ts";

export interface Invocation {
  name: string;
  args: string[];
  dir: string;
  agent: string | undefined;
}

/** Runs one hook: `opened` hands over the store it opened, `answered` says the answer is out. */
export type HookDispatch = (inv: Invocation, opened: (s: Store) => void, answered: () => void) => Promise<number>;

export function parseArgs(argv: string[]): Invocation {
  // A current folder removed under the agent: the payload's cwd, or not_a_repo when the store opens.
  let dir = "";
  try {
    dir = currentDir();
  } catch {
    /* dir stays empty */
  }
  const { name, args, dirs, agent } = hookWords(argv);
  for (const d of dirs) dir = dir ? resolve(dir, d) : resolveDir(d);
  return { name, args, dir, agent };
}

/** Budget for a whole hook run; past it the hook answers as on an unexpected failure. */
function budgetMs(): number {
  const n = Number(process.env.HANDOFF_HOOK_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : 5000;
}

/** When the watchdog's budget started (runHook sets it): the payload's budget counts from then too. */
let budgetStart = Date.now();
/** What the watchdog does when the budget is spent (runHook sets it). */
let timeUp = (): void => {};

/**
 * Reading the payload may take most of the budget, leaving time to answer: 80% of it, counted from
 * the watchdog's start. Counted from the read's own start, a loaded machine that took a fifth of
 * the budget to get there had the watchdog answer first ("timed out") instead of this read's
 * clearer "no end of input on stdin".
 */
export function stdinBudget(): number {
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

/**
 * Writes an answer, unless the budget is spent by then: the watchdog answers instead, as its timer
 * would have at the next turn of the event loop. An answer worked out without such a turn (the
 * payload read in place, the refs read synchronously) gave the timer no chance to fire.
 */
export function out(text: string): void {
  if (Date.now() - budgetStart >= budgetMs()) timeUp();
  if (text) stdout(text);
}

export function warn(text: string): void {
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

/** The hooks named `names`, each run by `dispatch` under the watchdog. */
async function main(inv: Invocation, names: string[], dispatch: HookDispatch): Promise<number> {
  if (!names.includes(inv.name)) {
    warn(`unknown hook ${JSON.stringify(inv.name)}; hooks: ${names.join(", ")}`);
    return 2;
  }
  let store: Store | null = null;
  let settled = false;
  budgetStart = Date.now();
  timeUp = () => {
    if (settled) return;
    settled = true;
    const code = failureAnswer(inv.name, `timed out after ${budgetMs()} ms`, strictMode(store, inv.dir));
    process.exit(code);
  };
  const watchdog = setTimeout(timeUp, budgetMs());
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

/**
 * Exits as soon as the answer is written (synchronously, see write-out.ts): a stdin read left
 * blocked after a timeout, or a git child, must not keep an agent waiting. `untimed` is what runs
 * without the watchdog (hook-main.ts's detached catch writer), by name.
 */
export function runHook(argv: string[], names: string[], dispatch: HookDispatch, untimed?: (inv: Invocation) => Promise<number> | null): void {
  const start = async () => {
    const inv = parseArgs(argv);
    return untimed?.(inv) ?? main(inv, names, dispatch);
  };
  start().then(
    (code) => process.exit(code),
    (e) => {
      warn(`unexpected error: ${(e as Error)?.message ?? String(e)} (failing open)`);
      process.exit(0);
    },
  );
}
