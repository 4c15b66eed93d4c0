// `task show <id>`: one verb, its command line as data and the function that runs it (verb-spec.ts),
// read by commander's program (task.ts) and by the hot bundle's fast reading (fast-line.ts) alike.
import { showTask } from "../../store/task-store.ts";
import { shownWithNote } from "../../present/newer-note.ts";
import { blockedEdgesOf } from "../../store/dependency-actions.ts";
import { taskExtrasText } from "../../present/render-tasks.ts";
import { approvalOf } from "../../store/approvals.ts";
import { withStoreFor } from "../context.ts";
import { verb } from "../verb-command.ts";
import { emit } from "../../present/output.ts";
import { taskDetail } from "../../present/render.ts";

/** `task show <id>`: the record as stored (the MCP get_task returns the same), plus its blocked edges when it has dependencies. */
export const TASK_SHOW = verb<[string]>({ words: ["task", "show"], description: "show one task", args: [["<id>"]], options: [], globals: { values: { id: "task" } } }, ([id], o) =>
  withStoreFor(o, async (store, g) => {
    const t = await showTask(store, id);
    const blocked = await blockedEdgesOf(store, t);
    const approved = t.verify ? !!(await approvalOf(store, t.verify)) : undefined;
    const held = await store.heldAsNewer();
    const { shown, note } = shownWithNote(t.after?.length ? { ...t, blocked_by: blocked } : t, held);
    emit(!!g.json, shown, () => taskDetail(t, store.now()) + taskExtrasText(t, blocked, approved) + (note ? `\n${note}` : ""));
  }),
);
