// V8's optimising compiler in a long-running server among others. Each server optimises the same
// functions for itself, and with inlining (V8's default) each compile builds the graph of every
// call it folds in: eight servers racing claim_next over 1,000 tasks spent ~30% of their CPU in
// TurboFan (on V8's platform threads, sharing the cores with the racers' own work). Without
// inlining those races took ~11-16% less CPU a grant, the servers' main threads none more; but a
// lone server's warm claim_task took 2-9% longer, its hot code now calling what it had inlined
// (docs/performance.md, fifty-second session). So a server compiles without inlining only once it
// is contended: it lost a race to another writer on this machine, or waited for a write turn.
import { setFlagsFromString } from "node:v8";
import { onFirstContention } from "../store/store.ts";

let changed = false;

/** From the first contention on, compiles go without inlining (read at each compile; Node freezes no flag). */
export function compileLighterWhenContended(): void {
  onFirstContention(() => {
    setFlagsFromString("--no-turbo-inlining");
    changed = true;
  });
}

/**
 * Whether this process changed V8's flags. A code cache carries the hash of the flags it was made
 * under, and V8 rejects it in a process whose flags differ: one made after the change would be
 * rejected by every later start, and rewritten by it (cli/code-cache.ts writes none then).
 */
export const flagsChanged = (): boolean => changed;
