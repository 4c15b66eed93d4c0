// `stats` figures for drift and negotiation, from the same event history: undeclared edits the
// hooks saw, release requests, their answers and how long answers took. Pure.
import { durationFigures, type DurationFigures } from "./stats.ts";
import type { HandoffEvent } from "./event.ts";
import { foldRequests } from "./release-request.ts";

export interface NegotiationStats {
  /** Notices of edits outside a declaration: events, distinct agent+path pairs, agents. */
  undeclared: { notices: number; paths: number; agents: number };
  requests: { asked: number; answered: number; released: number; kept: number; open: number; time_to_answer: DurationFigures };
}

export function negotiationStats(events: HandoffEvent[], since: Date | null): NegotiationStats {
  const from = since?.getTime() ?? -Infinity;
  const inWindow = (at: string) => Date.parse(at) >= from;
  const notices = events.filter((e) => e.type === "undeclared_edit" && inWindow(e.at));
  const pairs = new Set(notices.flatMap((e) => (e.paths ?? []).map((p) => `${e.agent}\0${p}`)));
  const asked = foldRequests(events).requests.filter((r) => inWindow(r.at));
  const answered = asked.filter((r) => r.answer);
  return {
    undeclared: { notices: notices.length, paths: pairs.size, agents: new Set(notices.map((e) => e.agent)).size },
    requests: {
      asked: asked.length,
      answered: answered.length,
      released: answered.filter((r) => r.answer!.verdict === "release").length,
      kept: answered.filter((r) => r.answer!.verdict === "keep").length,
      open: asked.length - answered.length,
      time_to_answer: durationFigures(answered.map((r) => Date.parse(r.answer!.at) - Date.parse(r.at))),
    },
  };
}
