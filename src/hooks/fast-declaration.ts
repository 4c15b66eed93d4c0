// The caller's declaration, as the fast path needs it: the files its open session names, and the
// patterns of its own live leases (which include the scopes of the tasks it claims). An edit
// outside a declaration is the full hook's business (it tells the agent once), so the fast path
// answers only inside one, or for an agent that declared nothing.
import type { Lease } from "../core/lease.ts";
import { loadAgent } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";

export async function declaredPatterns(store: Store, leases: Lease[], now: number): Promise<string[]> {
  const agent = store.actor.agent;
  const out = new Set<string>();
  for (const l of leases) if (l.agent === agent && Date.parse(l.expires_at) > now) out.add(l.pattern);
  const stored = await loadAgent(store, agent);
  if (stored && stored.record.ended_at === null) for (const f of stored.record.files) out.add(f);
  return [...out];
}
