import { createInterface } from "node:readline";
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { validateTaskId } from "../../core/ids.ts";
import { approveCommand } from "../../store/approvals.ts";
import { loadTask } from "../../store/task-store.ts";
import { verifyConsent, type VerifyConsent } from "../../store/verify-consent.ts";
import { emit } from "../../present/output.ts";
import { neutralise, neutraliseLine } from "../../present/untrusted.ts";
import { withGlobals, withStore } from "../context.ts";

function consentText(c: VerifyConsent): string {
  return [
    `task ${c.task} runs this command on done, in your worktree, as you:`,
    "",
    `    ${neutralise(c.command)}`,
    "",
    `written by: ${neutraliseLine(c.author)} (names are self-declared)`,
    `origin:     ${neutraliseLine(c.origin)}`,
    `sha256:     ${c.hash}`,
  ].join("\n");
}

function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      resolve(answer); // before close, whose handler answers "" (end of input: no consent)
      rl.close();
    });
    rl.on("close", () => resolve(""));
  });
}

export function registerApprove(program: Command): void {
  withGlobals(
    program
      .command("approve")
      .description("a person approves a task's verify command (written elsewhere) to run on done in this clone; asks on a terminal, else needs HANDOFF_APPROVE=<sha256 of the command>")
      .argument("<task>"),
    { writes: true, values: { task: "task" } },
  ).action(async (id: string, _o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      validateTaskId(id);
      const c = await verifyConsent(store, (await loadTask(store, id)).task);
      if (!c) fail("not_found", `task ${id} has no verify command`, { task: id });
      if (c.approval) {
        emit(!!g.json, { ...c, approved: true }, () => `already ${c.approval!.how === "written" ? "written" : "approved"} in this clone: ${c.command}`);
        return;
      }
      const fromEnv = process.env.HANDOFF_APPROVE;
      const onTerminal = !fromEnv && process.stdin.isTTY === true && process.stderr.isTTY === true;
      if (onTerminal) {
        process.stderr.write(consentText(c) + "\n\n");
        const answer = (await ask("Approve running it in this clone? [y/N] ")).trim().toLowerCase();
        if (answer !== "y" && answer !== "yes") fail("unapproved_command", `not approved: the verify command of ${id} will not run here`, { task: id });
      }
      const approval = await approveCommand(store, id, c.command, onTerminal ? { kind: "terminal" } : { kind: "hash", hash: fromEnv });
      emit(!!g.json, { ...c, approval, approved: true }, () => `approved in this clone: ${c.command}`);
    });
  });
}
