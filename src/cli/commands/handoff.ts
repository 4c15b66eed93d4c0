import type { Command } from "commander";
import type { Task } from "../../core/task.ts";
import { ack, handoff, inbox } from "../../store/handoff-actions.ts";
import type { Store } from "../../store/store.ts";
import { collect, withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../../present/output.ts";
import { handoffText, inboxEntryText } from "../../present/render-tasks.ts";
import { handoffJson, inboxJson } from "../../present/handoff.ts";
import { renderRejection } from "../../present/handoff-text.ts";
import { requestInbox } from "../../store/release-requests.ts";
import { renderAnswer, renderRequest } from "../../present/render-requests.ts";

/** After a claim: the handoffs that came with the claimed task's dependencies, shown once in text. */
export async function deliveredWithClaim(store: Store, t: Task): Promise<string> {
  if (!t.after?.length) return "";
  const { entries } = await inbox(store);
  const mine = entries.filter((e) => e.via === t.id);
  if (!mine.length) return "";
  return `\n\n${mine.length} handoff${mine.length === 1 ? "" : "s"} from the tasks ${t.id} waits on (ack each: git handoff ack <id>):\n${mine.map((e) => handoffText(e.handoff, "  ")).join("\n")}`;
}

export function registerHandoff(program: Command): void {
  withGlobals(
    program
      .command("handoff")
      .description("hand over a task's result: commit, diff summary (by git), changed contract, how to verify, open questions")
      .argument("<task>")
      .option("--to <agent>", "the consumer (default: whoever claims a task that waits on this one)")
      .option("--commit <rev>", "the commit handed over (default: the task's done commit, else HEAD)")
      .option("--contract <text>", "the contract (API, schema, behaviour) that changed")
      .option("--verify <cmd>", "how the consumer can verify it")
      .option("--question <text>", "an open question or unresolved assumption (repeatable)", collect, [])
      .option("--note <text>", "anything else the consumer should know"),
    { writes: true, values: { task: "task", "--to": "agent" } },
  ).action(async (id: string, o: { to?: string; commit?: string; contract?: string; verify?: string; question: string[]; note?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const r = await handoff(store, id, {
        ...(o.to !== undefined ? { to: o.to } : {}),
        ...(o.commit !== undefined ? { commit: o.commit } : {}),
        ...(o.contract !== undefined ? { contract: o.contract } : {}),
        ...(o.verify !== undefined ? { verify: o.verify } : {}),
        ...(o.note !== undefined ? { note: o.note } : {}),
        questions: o.question,
      });
      emit(!!g.json, handoffJson(r.handoff), () => `recorded ${r.handoff.id}\n${handoffText(r.handoff)}`);
    });
  });

  withGlobals(
    program.command("inbox").description("what waits for you: rejected reviews of your work, release requests to answer and answers to yours, and handoffs addressed to you or on tasks your claimed tasks wait on, until you ack them"),
  ).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const { entries, rejections, problems } = await inbox(store);
      const { asked, answered } = await requestInbox(store);
      for (const p of problems) warn(p);
      // Rejections of this agent's reviews first, then release requests and answers, then handoffs.
      const items = inboxJson({ rejections, asked, answered, entries });
      emit(!!g.json, [...items.rejections, ...items.requests, ...items.entries], () =>
        entries.length || rejections.length || asked.length || answered.length
          ? [...rejections.map((r) => renderRejection(r)), ...asked.map((r) => renderRequest(r)), ...answered.map(renderAnswer), ...entries.map(inboxEntryText)].join("\n\n")
          : "inbox empty",
      );
    });
  });

  withGlobals(program.command("ack").description("acknowledge a handoff: it leaves your inbox").argument("<handoff>", "its id, like api#1"), { writes: true }).action(
    async (id: string, _o, cmd: Command) => {
      await withStore(cmd, async (store, g) => {
        const t = await ack(store, id);
        const h = t.handoffs?.find((x) => x.id === id);
        emit(!!g.json, h ? handoffJson(h) : t, () => `acked ${id}`);
      });
    },
  );
}
