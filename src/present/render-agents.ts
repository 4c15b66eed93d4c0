import type { AgentRecord } from "../core/agent.ts";
import type { Roster } from "../core/agent-roster.ts";
import { buildText } from "../core/build-identity.ts";
import { formatAgo } from "../core/duration.ts";
import { paint } from "./output.ts";

export function agentDetail(a: AgentRecord): string {
  const lines = [`objective:  ${a.objective ?? "-"}`, `where:      ${a.scope}${a.branch ? ` ${a.branch}` : ""}${a.worktree ? ` ${a.worktree}` : ""}`];
  if (a.files.length) lines.push(`files:      ${a.files.join(" ")}`);
  if (a.awaits) lines.push(`awaits:     ${a.awaits}`);
  if (a.session) lines.push(`session:    ${a.session}`);
  lines.push(`heartbeat:  ${a.heartbeat_at}`);
  return lines.join("\n");
}

const STATUS_PAINT = { active: paint.green, stale: paint.yellow, disconnected: paint.red };

/**
 * `claims`: how many held task ids a line names at most (the rest counted); all when omitted.
 * `builds`: each line ends with the git-handoff build the agent runs (`agents`, list_agents).
 */
export function rosterText(r: Roster, opts: { claims?: number; builds?: boolean } = {}): string {
  const ids = (list: string[]) => (opts.claims !== undefined && list.length > opts.claims ? `${list.slice(0, opts.claims).join(" ")} +${list.length - opts.claims} more` : list.join(" "));
  if (!r.agents.length && !r.undeclared_holders.length) return "no agents";
  // Undeclared holders share the name column: a person's user@host is often the longest name.
  const w = Math.max(5, ...r.agents.map((a) => a.agent.length), ...r.undeclared_holders.map((u) => u.agent.length));
  const lines = r.agents.map((a) => {
    const status = STATUS_PAINT[a.status](a.status.padEnd(12));
    const cap = `${a.capacity.claimed}/${a.capacity.max}`.padEnd(5);
    const age = formatAgo(a.heartbeat_age_ms).padEnd(9);
    const where = paint.dim(`${a.branch ?? "(detached)"} ${a.worktree ?? ""}`.trim());
    const claims = a.claimed.length ? ` [${ids(a.claimed)}]` : "";
    const gc = a.gc_due ? paint.red(" gc-due") : "";
    const build = opts.builds ? paint.dim(`  build ${buildText(a.build)}`) : "";
    return `${a.agent.padEnd(w)}  ${status} ${cap} ${age} ${a.objective ?? "-"}${claims}  ${where}${gc}${build}`;
  });
  for (const u of r.undeclared_holders) lines.push(`${u.agent.padEnd(w)}  ${paint.dim("undeclared")}   holds [${ids(u.claimed)}]`);
  return lines.join("\n");
}
