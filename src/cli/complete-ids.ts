// The ids a shell completes, read when TAB is pressed: the completion scripts (completion.ts) run
// `git handoff task list --complete PREFIX` and `git handoff agents --complete PREFIX`. A TAB
// must answer at once and change nothing, so this reads ref names only (no record), bounded, and
// skips what every other command does after its answer (the heartbeat, renewals, packing).
import { Option } from "commander";
import { currentDir, resolveDir } from "../git/repo.ts";
import { openStore } from "../store/store.ts";
import { writeOut } from "../present/output.ts";
import type { GlobalOptions } from "./context.ts";
import type { OptionSpec } from "./verb-spec.ts";

/** More than a shell shows at once; a repository with more asks for a longer prefix. */
export const COMPLETE_MAX = 200;

/** The hidden option that turns a listing into the completion's (not in the help or the docs). */
export function completeOptionSpec(what: string): OptionSpec {
  return { flags: "--complete <prefix>", description: `print only the ${what} that start with PREFIX, one a line, at most ${COMPLETE_MAX} (for shell completion)`, hidden: true };
}

/** completeOptionSpec as commander's option. */
export function completeOption(what: string): Option {
  const { flags, description } = completeOptionSpec(what);
  return new Option(flags, description).hideHelp();
}

/** Prints the names under `family` (e.g. refs/handoff/tasks/) that start with `prefix`, in name order. */
export async function printCompletions(g: GlobalOptions, family: string, prefix: string): Promise<void> {
  const store = await openStore({ cwd: g.C ? resolveDir(g.C) : currentDir() });
  try {
    const names: string[] = [];
    for (const { name } of await store.listRefs(family)) {
      const id = name.slice(family.length);
      if (!id.startsWith(prefix)) continue;
      names.push(id);
      if (names.length === COMPLETE_MAX) break;
    }
    writeOut(names.map((n) => `${n}\n`).join(""));
  } finally {
    store.close();
  }
}
