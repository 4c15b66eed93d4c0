// The pre-edit hooks (each agent's, hook-names.ts AGENT_HOOKS): check the edit, answer, then log
// the catch and refresh the fast path's cache. Served by pre-edit-main.ts's bundle, which holds
// nothing else, and by hook-main.ts's.
import { statSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { HandoffError } from "../core/errors.ts";
import type { Store } from "../store/store.ts";
import { openSyncedStore } from "../sync/open.ts";
import { editIntent, formatAnswer } from "./agents.ts";
import { AGENT_HOOKS } from "./hook-names.ts";
import { recordHookCatch } from "./catch-record.ts";
import { refreshFastCache } from "./fast-cache.ts";
import { holdLogIndex, saveLogIndex } from "../store/log-index.ts";
import { checkEdit } from "./edit-check.ts";
import { contextAdditions, recordAdditions, type ContextAdditions } from "./drift-notice.ts";
import { agentForPayload } from "./session-seam.ts";
import { parsePayload, readStdin } from "./stdin.ts";
import { mark } from "./profile.ts";
import { out, stdinBudget, warn, type HookDispatch } from "./hook-run.ts";

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

/**
 * The paths of the answer's code this process took, as bits (the code cache's, cli/code-cache.ts
 * PathsOfRun): a denial, an answer with text, one without (a free file), a shell command's.
 */
let pathsTaken = 0;
export const codePaths = (): number => pathsTaken;

/** `answered`: the answer is out; logging the catch afterwards must not let the watchdog answer again. */
export const answerEdit: HookDispatch = async (inv, opened, answered) => {
  const open = async (dir: string, agent: string | undefined) => {
    const s = await openSyncedStore({ cwd: dir, ...(agent !== undefined ? { agent } : {}) });
    opened(s);
    return s;
  };
  const kind = AGENT_HOOKS[inv.name]!;
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
    holdLogIndex(store); // the deliveries' read of the logs writes its index after the answer
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
  pathsTaken |= intent.shell ? 8 : result.decision === "deny" ? 1 : result.text || extra.text ? 2 : 4;
  mark("answered");
  answered();
  // Before the catch is handed on: its writer indexes its own commit, after this.
  saveLogIndex(store);
  // The next edit's opening takes git's config files from there while they stay as they are.
  store.saveConfigMemo();
  await recordHookCatch(store, inv.name, result.answers);
  await recordAdditions(store, extra);
  // The fast path (git-hooks/fast-hook.sh) answers the next edits from what this run saw.
  await refreshFastCache(store);
  mark("cache refreshed");
  return a.code;
};
