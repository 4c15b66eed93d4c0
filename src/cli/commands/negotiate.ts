// `ask` and `answer`: the negotiation channel. A refusal's "negotiate" step names `ask`; the holder
// learns of the request in its inbox and its next hook answer, and answers with `answer`.
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { parseUntil, targetText } from "../../core/release-request.ts";
import { answerReleaseRequest, askToRelease } from "../../store/release-requests.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit } from "../../present/output.ts";
import { renderAnswer } from "../../present/render-requests.ts";

export function registerNegotiate(program: Command): void {
  withGlobals(
    program
      .command("ask")
      .description("ask the agent holding a task or a lease to release it; it sees the request in its inbox and its next hook answer")
      .argument("<agent>", "the holder")
      .requiredOption("--release <task|path>", "the task id, or a path or glob it holds a lease on")
      .option("--reason <text>", "why you need it"),
    { writes: true, values: { agent: "agent", "--release": "task" } },
  ).action(async (agent: string, o: { release: string; reason?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const r = await askToRelease(store, agent, o.release, o.reason ?? null);
      // Leases it could not compare within the budget are named: the request covers only the rest.
      emit(!!g.json, r, () => `asked ${agent} to release ${targetText(r)}: request ${r.id} (its answer reaches your inbox)${r.not_compared ? `\nnote: ${r.not_compared.note}` : ""}`);
    });
  });

  withGlobals(
    program
      .command("answer")
      .description("answer a release request: --release gives the task or lease back in the same transaction, --keep says no (for now)")
      .argument("<request>", "its id, like rq-0a1b2c3d (see git handoff inbox)")
      .option("--release", "release what was asked for")
      .option("--keep", "keep it")
      .option("--until <time>", "with --keep: until when (an ISO time, or a duration like 2h)")
      .option("--reason <text>", "why, for the requester"),
    { writes: true },
  ).action(async (id: string, o: { release?: boolean; keep?: boolean; until?: string; reason?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      if (!!o.release === !!o.keep) fail("usage", "answer takes exactly one of --release or --keep");
      const until = o.until !== undefined ? parseUntil(o.until, store.now()) : null;
      const r = await answerReleaseRequest(store, id, o.release ? "release" : "keep", until, o.reason ?? null);
      const gave = r.released.task ? `task ${r.released.task}` : r.released.paths.join(" ");
      emit(!!g.json, r, () => `${renderAnswer(r.request)}${o.release ? (gave ? `\nreleased ${gave}` : "\nnothing left to release: you no longer hold it") : ""}`);
    });
  });
}
