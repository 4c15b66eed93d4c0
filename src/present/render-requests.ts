// Release requests and their answers as the holder and the requester read them (inbox, hook and
// SessionStart context, ask/answer results). The reason is another agent's text: fenced.
import { targetText, type ReleaseRequest } from "../core/release-request.ts";
import { handoffCommand } from "../core/shell-quote.ts";
import { spell, steps, type FrontEnd } from "./suggestions.ts";
import { fence, neutraliseLine, UNTRUSTED_LABEL } from "./untrusted.ts";

function reasonLines(reason: string | null): string[] {
  return reason ? [`  [${UNTRUSTED_LABEL}]`, "  reason:", fence(reason, "    ")] : [];
}

/** A request waiting for the holder's answer, with the answers worded for `front`. */
export function renderRequest(r: ReleaseRequest, front: FrontEnd = "cli"): string {
  const how =
    front === "cli"
      ? `${handoffCommand("answer", r.id, "--release")}  or  ${handoffCommand("answer", r.id, "--keep", "--until", "TIME", "--reason", "TEXT")}`
      : `${spell(steps.answer(r.id, "release"), "mcp")}  or  answer_request {"request": ${JSON.stringify(r.id)}, "answer": "keep", "until": "2h", "reason": "..."}`;
  return [`release request ${r.id} from ${neutraliseLine(r.from)} at ${r.at}: release ${neutraliseLine(targetText(r))}`, ...reasonLines(r.reason), `  answer: ${how}`].join("\n");
}

/** An answer, as the requester reads it. */
export function renderAnswer(r: ReleaseRequest): string {
  const a = r.answer!;
  const what = a.verdict === "release" ? "released" : `kept${a.until ? ` until ${a.until}` : ""}`;
  return [`request ${r.id} to ${neutraliseLine(r.to)} (release ${neutraliseLine(targetText(r))}): ${what} at ${a.at}`, ...reasonLines(a.reason)].join("\n");
}

/** The lines an agent's context gets (hook answer, SessionStart); empty when nothing is new. */
export function requestsContext(agent: string, fresh: { requests: ReleaseRequest[]; answers: ReleaseRequest[] }): string {
  const parts: string[] = [];
  if (fresh.requests.length) {
    parts.push(`git-handoff: ${fresh.requests.length} release request${fresh.requests.length === 1 ? "" : "s"} for ${agent}:`, ...fresh.requests.map((r) => renderRequest(r)));
  }
  if (fresh.answers.length) parts.push(`git-handoff: answers to ${agent}'s release requests:`, ...fresh.answers.map(renderAnswer));
  return parts.join("\n");
}
