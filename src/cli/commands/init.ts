import { join } from "node:path";
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { configGet, configSetLocal, configWithScope, gitPath } from "../../git/config.ts";
import { currentDir, discoverRepo, resolveDir } from "../../git/repo.ts";
import { moveLayout } from "../../store/separate-store.ts";
import { uncommittedPaths } from "../../git/drift-paths.ts";
import { AGENT_CONFIG_FILES, AGENT_KEYS, applyActions, hooksDirFrom, planInstall, sharedScope, planUninstall, type Action, type HookLayout } from "../../setup/hook-install.ts";
import type { Store } from "../../store/store.ts";
import { pathNotes } from "../../setup/on-path.ts";
import { planUserInstall, planUserUninstall, userLayout } from "../../setup/user-install.ts";
import { globals, withGlobals, withStore } from "../context.ts";
import { emit } from "../../present/output.ts";
import { withMcpRegistration } from "./mcp-register.ts";

export const FORMAT_VERSION = "1";

/** The git-hooks/ templates ship next to dist/ in the package. */
const templates = () => join(__dirname, "..", "git-hooks");

async function layoutOf(store: Store): Promise<HookLayout> {
  const root = store.repo.workTree;
  if (!root) fail("invalid_input", "hooks need a worktree (this is a bare repository)");
  const set = await configWithScope(store.cwd, "core.hooksPath");
  const hooksPath = set?.value ?? null;
  return { workTree: root, hooksPath, hooksPathScope: sharedScope(set?.scope), hooksDir: hooksDirFrom(root, await gitPath(store.cwd, "hooks"), hooksPath) };
}

/** Each step as done (in a dry run: what it would do), already done, needs you, or a note. */
function actionLines(actions: Action[], dryRun: boolean): string[] {
  const label = (a: Action) => (a.op === "ok" ? "already done:" : a.op === "note" ? (a.needsYou ? "needs you:" : "note:") : "done:");
  const lines = actions.map((a) => `${(dryRun && a.op !== "ok" && a.op !== "note" ? "would do:" : label(a)).padEnd(13)} ${a.detail}`);
  return lines.length ? lines : ["hooks:  nothing to change"];
}

/** The changes and notes; what was already in place is listed apart (`already`). */
function publicActions(actions: Action[]) {
  return actions.filter((a) => a.op !== "ok").map(({ op, path, to, detail, needsYou }) => ({ op, path, ...(to ? { to } : {}), detail, ...(needsYou ? { needs_you: true } : {}) }));
}

/** `--agents claude,codex`: which agents' configs init writes. */
function agentsOption(value: string | undefined): string[] {
  if (value === undefined) return AGENT_KEYS;
  const names = value.split(",").map((n) => n.trim().toLowerCase()).filter(Boolean);
  const unknown = names.filter((n) => !AGENT_KEYS.includes(n));
  if (!names.length || unknown.length) fail("usage", `--agents takes a comma-separated list of ${AGENT_KEYS.join(", ")}; got ${JSON.stringify(value.slice(0, 80))}`);
  return [...new Set(names)];
}

export function registerInit(program: Command): void {
  withMcpRegistration(withGlobals(
    program
      .command("init")
      .description("prepare this repository for git-handoff and install the git and agent hooks (idempotent)")
      .option("--dry-run", "show what would change, change nothing")
      .option("--no-hooks", "only prepare the repository; install no hooks")
      .option("--agents <list>", `which agents' hook configs to write, comma-separated: ${AGENT_KEYS.join(",")} (default: all)`)
      .option("--user", "install user-scope agent hooks instead (~/.claude, ~/.gemini), for agents started in a subfolder; needs no repository")
      .option("--separate-store", "keep this clone's coordination refs in a separate store from the start (git handoff store --separate)"),
    { values: { "--agents": AGENT_KEYS } },
  )).action(async (o: { dryRun?: boolean; hooks?: boolean; user?: boolean; agents?: string; separateStore?: boolean }, cmd: Command) => {
    const agents = agentsOption(o.agents);
    if (o.user) return userScope(planUserInstall(userLayout()), !!o.dryRun, cmd);
    // Before the store is opened: opening it records this agent's heartbeat where the refs are.
    if (o.separateStore && !o.dryRun) {
      const g = globals(cmd);
      await moveLayout(discoverRepo(g.C ? resolveDir(g.C) : currentDir()), "separate");
    }
    await withStore(cmd, async (store, g) => {
      const changed = (await configGet(store.cwd, "handoff.version", "local")) !== FORMAT_VERSION;
      if (changed && !o.dryRun) await configSetLocal(store.cwd, "handoff.version", FORMAT_VERSION);
      const root = store.repo.workTree;
      // Agent configs an earlier init wrote and nobody committed yet: init says so again.
      const uncommitted = o.hooks === false || !root ? new Set<string>() : new Set(await uncommittedPaths(root, AGENT_CONFIG_FILES.map((a) => a.file)));
      const actions = o.hooks === false || !root ? [] : [...planInstall(await layoutOf(store), templates(), agents, uncommitted), ...pathNotes(root)];
      if (!o.dryRun) applyActions(actions);
      const result = { repo: store.repo.commonDir, store: store.repo.storeDir, agent: store.actor, changed, refs: "refs/handoff/", dry_run: !!o.dryRun, agents, actions: publicActions(actions), already: actions.filter((a) => a.op === "ok").map((a) => a.detail) };
      emit(!!g.json, result, () =>
        [
          changed ? "git-handoff is set up in this repository" : "git-handoff was already set up in this repository",
          `state:  refs under refs/handoff/ in ${store.repo.storeDir}${store.separateStore ? " (a separate store: git handoff store)" : ""}`,
          `agent:  ${store.actor.agent} (${store.actor.scope})`,
          ...actionLines(actions, !!o.dryRun),
          "next:   git handoff task add <objective>   then   git handoff claim --next",
        ].join("\n"),
      );
    });
  });

  withGlobals(
    program
      .command("uninstall")
      .description("remove the git and agent hooks git-handoff installed (restores earlier git hooks; state refs stay)")
      .option("--dry-run", "show what would change, change nothing")
      .option("--user", "remove the user-scope agent hooks init --user installed"),
  ).action(async (o: { dryRun?: boolean; user?: boolean }, cmd: Command) => {
    if (o.user) return userScope(planUserUninstall(userLayout()), !!o.dryRun, cmd);
    await withStore(cmd, async (store, g) => {
      const actions = planUninstall(await layoutOf(store));
      if (!o.dryRun) applyActions(actions);
      emit(!!g.json, { dry_run: !!o.dryRun, actions: publicActions(actions) }, () => actionLines(actions, !!o.dryRun).join("\n"));
    });
  });
}

/** `--user`: the user's own agent settings, no repository involved. */
function userScope(actions: Action[], dryRun: boolean, cmd: Command): void {
  if (!dryRun) applyActions(actions);
  emit(!!globals(cmd).json, { scope: "user", dry_run: dryRun, actions: publicActions(actions) }, () => actionLines(actions, dryRun).join("\n"));
}
