// What a shell completes the values of a command to, said where the command is defined: the
// scripts `git handoff completion bash|zsh|fish` prints (completion.ts) read it from there, so a
// verb that takes a task id completes task ids without a list kept anywhere else.
import type { Argument, Command, Option } from "commander";

/**
 * `task` and `agent`: the ids in the repository, read when TAB is pressed (`task list --complete`,
 * `agents --complete`); `file` and `dir`: names on disk; a list: these words, from the constant the
 * command checks its input against. A value marked with none of these (free text, a duration)
 * completes nothing.
 */
export type Completes = "task" | "agent" | "file" | "dir" | readonly string[];

const KINDS = new WeakMap<Argument | Option, Completes>();

/**
 * Marks values of `cmd`: keys are its arguments' names (`id` for `<id>`) and its options' long
 * flags (`--on`). A key the command lacks is a mistake in the definition, reported at once.
 */
export function completes<C extends Command>(cmd: C, values: Record<string, Completes>): C {
  for (const [key, kind] of Object.entries(values)) {
    const target = key.startsWith("-") ? cmd.options.find((o) => o.long === key || o.short === key) : cmd.registeredArguments.find((a) => a.name() === key);
    if (!target) throw new Error(`${cmd.name()} has no ${key.startsWith("-") ? "option" : "argument"} ${key} to complete`);
    KINDS.set(target, kind);
  }
  return cmd;
}

export function completesOf(x: Argument | Option): Completes | undefined {
  return KINDS.get(x);
}
