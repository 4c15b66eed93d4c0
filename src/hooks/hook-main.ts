// `git handoff hook <name>`: the bundle that serves every hook (the dispatcher sends an agent's
// pre-edit hook to pre-edit-main.ts's smaller bundle; this one answers it the same: edit-hook.ts),
// and the detached writer of their catch events. It loads neither commander nor the MCP SDK.
import { openSyncedStore } from "../sync/open.ts";
import type { Store } from "../store/store.ts";
import { afterToolAnswer, editIntent } from "./agents.ts";
import { AFTER_HOOKS, AGENT_HOOKS, HOOK_NAMES, SESSION_HOOKS } from "./hook-names.ts";
import { RECORD_CATCH, recordHookCatch, writePendingCatches } from "./catch-record.ts";
import { refreshFastCache } from "./fast-cache.ts";
import { checkEdit } from "./edit-check.ts";
import { answerEdit } from "./edit-hook.ts";
import { preCommit, prePush } from "./git-hooks.ts";
import { sessionContext } from "./session-start.ts";
import { agentForPayload, registerSession } from "./session-seam.ts";
import { parsePayload, readStdin } from "./stdin.ts";
import { mark } from "./profile.ts";
import { stderr } from "./write-out.ts";
import { neutralise } from "../present/untrusted.ts";
import { out, runHook, stdinBudget, warn, type Invocation } from "./hook-run.ts";

mark("bundle loaded");

/** The detached writer of a hook's catch events (catch-record.ts): nobody waits for it. */
async function writeCatches(inv: Invocation): Promise<number> {
  const store = await openSyncedStore({ cwd: inv.dir });
  try {
    await writePendingCatches(store, inv.args[0] ?? "");
  } finally {
    store.close();
  }
  return 0;
}

/** `answered`: the answer is out; logging the catch afterwards must not let the watchdog answer again. */
async function dispatch(inv: Invocation, opened: (s: Store) => void, answered: () => void): Promise<number> {
  if (AGENT_HOOKS[inv.name]) return answerEdit(inv, opened, answered);
  const open = async (dir: string, agent: string | undefined) => {
    const s = await openSyncedStore({ cwd: dir, ...(agent !== undefined ? { agent } : {}) });
    opened(s);
    return s;
  };
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

export function run(argv: string[]): void {
  runHook(argv, HOOK_NAMES, dispatch, (inv) => (inv.name === RECORD_CATCH ? writeCatches(inv) : null));
}
