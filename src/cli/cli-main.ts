// The commander-based CLI with every verb. Loaded by the dispatcher (git-handoff.ts) for every verb but
// the hot ones (hot-main.ts), hooks and MCP.
import { buildProgram } from "./program.ts";
import { runProgram } from "./run-program.ts";

export function run(argv: string[]): void {
  runProgram(buildProgram, argv);
}
