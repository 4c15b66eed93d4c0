// Who recently beat this clone to a task through the remote. Racers need not hold a claim to race
// (a task can be claimed and done in a moment), so live claims alone undercount them; every race
// lost names its winner, and the winners of the last minute are the likely racers of the next
// claim (candidate-choice.ts). Kept as small text, one "<epoch ms> <agent>" line per rival; pure.

/** How long a lost race keeps its winner counted as a racer. */
export const RIVAL_MS = 60_000;
/** At most this many rivals are remembered (the pool is bounded far below anyway). */
export const MAX_RIVALS = 64;

interface Rival {
  at: number;
  agent: string;
}

function parse(text: string | null | undefined): Rival[] {
  const out: Rival[] = [];
  for (const line of (text ?? "").split("\n")) {
    const m = /^(\d{1,15}) (\S{1,200})$/.exec(line);
    if (m) out.push({ at: Number(m[1]), agent: m[2]! });
  }
  return out;
}

const live = (r: Rival, now: number) => r.at <= now && now - r.at < RIVAL_MS;

/** The rivals text after `agent` won a race against this clone at `now`: the latest per agent, stale ones dropped. */
export function noteRival(text: string | null | undefined, agent: string, now: number): string {
  if (!/^\S{1,200}$/.test(agent)) return text ?? "";
  const kept = parse(text).filter((r) => r.agent !== agent && live(r, now)).slice(-(MAX_RIVALS - 1));
  return [...kept, { at: now, agent }].map((r) => `${r.at} ${r.agent}`).join("\n") + "\n";
}

/** How many agents other than `self` beat this clone to a task within RIVAL_MS of `now`. */
export function recentRivals(text: string | null | undefined, self: string, now: number): number {
  return new Set(parse(text).filter((r) => r.agent !== self && live(r, now)).map((r) => r.agent)).size;
}
