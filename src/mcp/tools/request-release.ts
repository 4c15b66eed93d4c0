// `request_release`: the MCP side of `git handoff ask`. The same store call as the CLI verb.
import * as z from "zod/mini";
import { targetText } from "../../core/release-request.ts";
import { askToRelease } from "../../store/release-requests.ts";
import { defineTool } from "../tool.ts";
import { describe } from "./common.ts";

export const requestReleaseTool = defineTool({
  name: "request_release",
  title: "Ask a holder to release a task or a lease",
  description: [
    "Ask the agent that holds a task (its claim and scope leases) or a file lease to give it back. The request is recorded on your log; the holder sees it in its inbox and its next hook answer, and answers with answer_request. Its answer reaches your inbox (and releases the task or lease in the same write when it says release).",
    "Call it when claim_task or an edit check refused you because someone else holds what you need and waiting is not good enough; say why in `reason`. Do not call it for an agent that is gone: reclaim instead.",
    "Refusals: `not_found`: no such agent, or it holds no task or lease `release`. `holder_gone`: the agent's session ended or went silent (the suggestion names the reclaim). `invalid_input`: asking yourself, an option-like or overlong value. `too_costly`: none of the agent's leases found to hold the path, and some not compared within the budget of glob matching (ask for one by its exact pattern); when some were found, the request asks for those and `not_compared` names the rest.",
  ].join("\n"),
  input: {
    agent: describe(z.string(), "the holder, as named in the refusal (data.holder)"),
    release: describe(z.string(), "the task id, or a path or glob the agent holds a lease on"),
    reason: z.optional(describe(z.string(), "why you need it (at most 500 characters); the holder reads it as another agent's words")),
  },
  output: { request: z.record(z.string(), z.unknown()) },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const r = await askToRelease(store, a.agent, a.release, a.reason ?? null);
    return {
      data: { request: r },
      text: `asked ${r.to} to release ${targetText(r)}: request ${r.id}${r.not_compared ? `\nnote: ${r.not_compared.note}` : ""}`,
      summary: `request ${r.id} sent to ${r.to}; its answer reaches your inbox`,
      next: [{ tool: "inbox", why: "the answer arrives there" }],
    };
  },
});
