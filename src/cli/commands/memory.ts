import { MAX_MEMORY_TEXT } from "../../core/memory.ts";
import { readBoundedInput } from "../input-file.ts";
import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { addMemory, editMemory, listMemories, loadMemory, removeMemory } from "../../store/memory-store.ts";
import { collect, parseInteger, withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../../present/output.ts";
import { memoryDetail, memoryLine } from "../../present/render-memories.ts";

/** The memory's text from the words given or a file (`-` is standard input), never both. */
function textFrom(words: string[] | undefined, file: string | undefined): string | undefined {
  if (words?.length && file !== undefined) fail("invalid_input", "give the text or --file, not both");
  // A character is at most 4 bytes of UTF-8: the record's own check counts the characters.
  if (file !== undefined) return readBoundedInput(file, 4 * MAX_MEMORY_TEXT, "the memory text", `at most ${MAX_MEMORY_TEXT} characters`).toString("utf8");
  return words?.length ? words.join(" ") : undefined;
}

export function registerMemory(program: Command): void {
  const memory = program
    .command("memory")
    .description("shared memories: short notes every agent, worktree and clone sees (decisions, gotchas, where things are)");

  withGlobals(
    memory
      .command("add")
      .description("leave a memory for the other agents")
      .argument("[text...]", "the memory (or --file)")
      .option("--file <path>", "read the text from a file (- for standard input)")
      .option("--task <id>", "the task it concerns (its holder sees it first)")
      .option("--tag <tag>", "a tag (repeatable)", collect, []),
    { writes: true, values: { "--file": "file", "--task": "task" } },
  ).action(async (words: string[], o: { file?: string; task?: string; tag: string[] }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const text = textFrom(words, o.file);
      if (text === undefined) fail("invalid_input", "a memory needs text: git handoff memory add <text> (or --file)");
      const m = await addMemory(store, { text, tags: o.tag, task: o.task ?? null });
      emit(!!g.json, m, () => `added ${memoryLine(m)}`);
    });
  });

  withGlobals(
    memory
      .command("list")
      .description("memories, newest first")
      .option("--task <id>", "only those about this task")
      .option("--tag <tag>", "only those with this tag")
      .option("--since <duration>", "only those written or edited within this long, like 2h or 7d")
      .option("--limit <n>", "at most this many"),
    { values: { "--task": "task" } },
  ).action(async (o: { task?: string; tag?: string; since?: string; limit?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const { limit, ...filter } = o;
      const r = await listMemories(store, { ...filter, ...(limit !== undefined ? { limit: parseInteger(limit, "--limit", 1, 100_000) } : {}) });
      for (const p of r.problems) warn(p);
      emit(!!g.json, r.memories, () => (r.memories.length ? r.memories.map(memoryLine).join("\n") : "no memories"));
    });
  });

  withGlobals(memory.command("show").description("one memory, whole").argument("<id>")).action(async (id: string, _o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const { memory: m } = await loadMemory(store, id);
      emit(!!g.json, m, () => memoryDetail(m));
    });
  });

  withGlobals(
    memory
      .command("edit")
      .description("change a memory's text, tags or task")
      .argument("<id>")
      .option("--text <text>", "the new text")
      .option("--file <path>", "the new text from a file (- for standard input)")
      .option("--tag <tag>", "the new tags, replacing the old (repeatable)", collect)
      .option("--task <id>", "the task it concerns (none: no task)"),
    { writes: true, values: { "--file": "file", "--task": "task" } },
  ).action(async (id: string, o: { text?: string; file?: string; tag?: string[]; task?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const text = textFrom(o.text !== undefined ? [o.text] : undefined, o.file);
      const m = await editMemory(store, id, {
        ...(text !== undefined ? { text } : {}),
        ...(o.tag !== undefined ? { tags: o.tag } : {}),
        ...(o.task !== undefined ? { task: o.task === "none" ? null : o.task } : {}),
      });
      emit(!!g.json, m, () => `edited ${memoryLine(m)}`);
    });
  });

  withGlobals(memory.command("rm").description("remove a memory (its history stays in git)").argument("<id>"), { writes: true }).action(async (id: string, _o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const m = await removeMemory(store, id);
      emit(!!g.json, { id: m.id, removed: true }, () => `removed ${m.id}`);
    });
  });
}
