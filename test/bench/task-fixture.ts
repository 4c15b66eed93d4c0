// Bench fixtures built fast: N live tasks written in bulk into one pack, their refs created
// together (ours), and the same N tasks as the peer's files (its .handoff/tasks/ layout), so
// 10,000 tasks take seconds, not the minutes of N real `task add` calls.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTask } from "../../src/core/task-ops.ts";
import { spawnSync } from "node:child_process";
import { eventMessage, FORMAT_MARKER } from "../../src/store/codec.ts";
import { TASK_FILE, taskRef } from "../../src/store/task-store.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";

export const taskId = (i: number) => `t-${i}`;

/**
 * `n` todo tasks `t-0..t-(n-1)`, each with the scope `area<i>/**` unless `scoped` is false: the
 * very records and commits `task add` writes, streamed to one `git fast-import` (one pack, the refs
 * created together at its end) instead of three loose objects and a ref file per task.
 */
export async function seedTasks(repo: string, n: number, opts: { scoped?: boolean; from?: number; scopeUnder?: string; chain?: boolean } = {}): Promise<void> {
  const store = await openStore({ cwd: repo, agent: "bench-setup" });
  try {
    const now = store.now();
    const parts: string[] = [];
    const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    for (let i = opts.from ?? 0; i < (opts.from ?? 0) + n; i++) {
      // `chain`: each task waits on the one before it.
      const after = opts.chain && i > (opts.from ?? 0) ? { after: [taskId(i - 1)] } : {};
      const out = createTask({ id: taskId(i), objective: `task ${i}`, priority: 0, scope: opts.scoped === false ? [] : [`${opts.scopeUnder ? `${opts.scopeUnder}/` : ""}area${i}/**`], maxAttempts: 3, ...after }, { actor: store.actor, now });
      if (!out.ok) throw new Error(out.refusal.message);
      const step = out.steps[0]!;
      const who = `${step.event.agent} <git-handoff@localhost> ${Math.floor(now.getTime() / 1000)} +0000`;
      parts.push(
        `commit ${taskRef(taskId(i))}\nauthor ${who}\ncommitter ${who}\n${data(eventMessage(step.event))}` +
          `M 100644 inline format\n${data(FORMAT_MARKER)}M 100644 inline ${TASK_FILE}\n${data(JSON.stringify(step.record, null, 2) + "\n")}\n`,
      );
    }
    parts.push("done\n");
    const r = spawnSync("git", ["fast-import", "--quiet", "--done"], { cwd: repo, input: parts.join(""), encoding: "utf8", maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(`seeding ${n} tasks: ${r.stderr}`);
  } finally {
    store.close();
  }
}

/** The same tasks in the peer's layout: one folder per task holding `_task.<status>.json`. */
export function seedPeerTasks(projectDir: string, n: number, from = 0): void {
  const at = new Date().toISOString();
  for (let i = from; i < from + n; i++) {
    const dir = join(projectDir, ".handoff", "tasks", `${taskId(i)}-task-${i}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "_task.todo.json"), JSON.stringify({ id: taskId(i), title: `task ${i}`, priority: "medium", created_at: at, updated_at: at }, null, 2) + "\n");
  }
}
