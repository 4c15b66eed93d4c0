// doctor's look at which builds of git-handoff the live agents run, by their declarations. Builds
// differ in what they read: an older one holds back records a newer one writes (newer-refs.ts), so
// agents on different builds may each see a different state. A hint, never a failure.
import { buildsInUse } from "../core/agent-roster.ts";
import { buildLabel, buildText, THIS_BUILD } from "../core/build-identity.ts";
import { namedFew } from "../core/named-few.ts";
import { listAgents } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";

const NAMED = 5;

export async function buildCheck(store: Store): Promise<Check> {
  const { agents } = await listAgents(store);
  const groups = buildsInUse(agents.map((a) => a.record), store.now(), store.config);
  const here = `this doctor runs ${buildLabel(THIS_BUILD)}`;
  const names = (list: string[]) => namedFew(list, NAMED);
  if (!groups.length) return { name: "builds", status: "ok", detail: `no live agent; ${here}` };
  if (groups.length === 1) {
    const [only] = groups;
    return { name: "builds", status: "ok", detail: `every live agent (${names(only!.agents)}) runs ${buildText(only!.build)}; ${here}` };
  }
  return {
    name: "builds",
    status: "warn",
    detail: `live agents run ${groups.length} builds of git-handoff: ${groups.map((g) => `${buildText(g.build)}: ${names(g.agents)}`).join("; ")}; ${here}`,
    fix: "run one build everywhere: update git-handoff where an older one runs and restart those agents (an older build holds back what a newer one writes); an agent's next heartbeat records its build",
  };
}
