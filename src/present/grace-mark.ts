import { formatDuration, formatUntil } from "../core/duration.ts";

/**
 * Another agent's lease or claim expired by this clock that still stands for the takeover grace
 * (its holder's clock may be behind this one): a write of its path, or a claim of its task, is
 * refused until `graceUntil`. `expiresInMs`: its expiry from now (negative). One wording for every
 * view that lists it (`leases`, `status`, `task list`/`show`, MCP).
 */
export function graceMark(expiresInMs: number, expiresAt: string, graceUntil: string): string {
  const left = expiresInMs + Date.parse(graceUntil) - Date.parse(expiresAt);
  return `expired ${formatDuration(-expiresInMs)} ago by this clock, stands for the takeover grace (clock skew) until ${graceUntil} (${formatUntil(left)})`;
}
