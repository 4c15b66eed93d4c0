// A racing agent for the sync tests: one process that claims each given task in turn through the
// store (the same path as `git handoff claim`) and prints one JSON line per attempt.
// Usage: node --import tsx racer.ts (or its bundle, support/bundle.ts) <repo> <agent> <task>...
import { HandoffError } from "../../src/core/errors.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";
import { claim } from "../../src/store/task-actions.ts";

const [repo, agent, ...tasks] = process.argv.slice(2);
const store = await openStore({ cwd: repo!, agent: agent! });
for (const id of tasks) {
  try {
    const t = await claim(store, id);
    process.stdout.write(JSON.stringify({ id, ok: true, holder: t.claim?.agent, fence: t.claim?.fence }) + "\n");
  } catch (e) {
    if (!(e instanceof HandoffError)) throw e;
    process.stdout.write(JSON.stringify({ id, ok: false, code: e.code, holder: e.refusal.data?.holder ?? null, message: e.message }) + "\n");
  }
}
store.close();
