// V8's optimising compiler in a long-running server. Each server optimises the same functions for
// itself, and with inlining (V8's default) each of those compiles builds the graph of every call it
// folds in: eight servers racing claim_next over 1,000 tasks spent ~30% of their CPU in TurboFan
// (on V8's platform threads), most of it in a race's first seconds. Without inlining, the claims
// in those races took ~16% less CPU each, and the servers' main threads none more
// (docs/performance.md, fifty-second session). Set at run time: a process's flags come from its
// command line, which an agent's MCP host writes.
import { setFlagsFromString } from "node:v8";

/** Compiles without inlining from now on (the flag is read at each compile; none is frozen in Node). */
export function compileWithoutInlining(): void {
  setFlagsFromString("--no-turbo-inlining");
}
