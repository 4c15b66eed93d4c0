// The commander-based CLI. Loaded by the dispatcher (git-handoff.ts) for every verb but the hot ones.
import { CommanderError } from "commander";
import { buildProgram } from "./program.ts";
import { reportError } from "../present/output.ts";

/** Commander's own errors are usage errors (exit 2); help and version are not errors at all. */
async function main(argv: string[]): Promise<number> {
  const wantsJson = argv.includes("--json");
  try {
    await buildProgram().parseAsync(argv, { from: "user" });
    return Number(process.exitCode ?? 0); // a command may answer with a status (check: 3 on deny)
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.help" || e.code === "commander.version") return 0;
      return 2; // commander already printed the message
    }
    return reportError(e, wantsJson);
  }
}

export function run(argv: string[]): void {
  main(argv).then((code) => {
    // A command that printed its own report may have set a failing status (doctor): keep it.
    process.exitCode = code || process.exitCode || 0;
  });
}
