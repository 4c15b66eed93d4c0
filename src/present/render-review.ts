// The review queue as text, shared by the CLI's `review` and the MCP review_queue tool.
import { diffLine } from "../core/diff-summary.ts";
import type { ReviewItem } from "../core/review.ts";
import { verificationDetail } from "./render-tasks.ts";

export function reviewItemText(r: ReviewItem): string {
  const lines = [`${r.task}  submitted by ${r.submitted_by} at ${r.submitted_at}  ${r.objective.split("\n")[0]}`];
  if (r.commit) lines.push(`  commit: ${r.commit}`);
  if (r.diff) lines.push(`  diff:   ${diffLine(r.diff)}`);
  if (r.verification) lines.push(verificationDetail(r.verification, "  "));
  return lines.join("\n");
}
