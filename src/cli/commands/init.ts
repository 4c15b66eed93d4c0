import type { Command } from "commander";
import { git } from "../../git/run.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit } from "../output.ts";
import { withMcpRegistration } from "./mcp-register.ts";

export const FORMAT_VERSION = "1";

export function registerInit(program: Command): void {
  withMcpRegistration(withGlobals(program.command("init").description("prepare this repository for git-handoff (idempotent)"))).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const current = await git(["config", "--local", "--get", "handoff.version"], { cwd: store.cwd });
      const changed = current.stdout.trim() !== FORMAT_VERSION;
      if (changed) await git(["config", "--local", "handoff.version", FORMAT_VERSION], { cwd: store.cwd });
      const result = { repo: store.repo.commonDir, agent: store.actor, changed, refs: "refs/handoff/" };
      emit(!!g.json, result, () =>
        [
          changed ? "git-handoff is set up in this repository" : "git-handoff was already set up in this repository",
          `state:  refs under refs/handoff/ in ${store.repo.commonDir}`,
          `agent:  ${store.actor.agent} (${store.actor.scope})`,
          "next:   git handoff task add <objective>   then   git handoff claim --next",
        ].join("\n"),
      );
    });
  });
}
