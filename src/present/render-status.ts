// `status`: the bird's-eye view, compact and aligned; colour only on a TTY (paint).
import { edgeText } from "../core/dependency-graph.ts";
import { diffLine } from "../core/diff-summary.ts";
import type { StatusView } from "../core/overview.ts";
import { paint } from "./output.ts";
import { rosterText } from "./render-agents.ts";
import { overviewText, unbuiltLines } from "./render.ts";
import { flagText, type LeaseRow } from "../core/lease-overview.ts";
import { formatUntil } from "../core/duration.ts";
import { graceMark } from "./grace-mark.ts";
import { boundSections, SECTION_LINES } from "./bounded-text.ts";
import { oneLine } from "../core/one-line.ts";


/** Held task ids a bounded agent line names at most. */
const ROSTER_CLAIMS = 8;

/** Agent columns a bounded matrix shows at most. */
const MATRIX_AGENTS = 12;

/**
 * Task rows x agent columns: H holds the claim, R submitted it for review, . nothing. Bounded
 * (`rowLimit`): the first rows, and only the agents with a mark in them (at most MATRIX_AGENTS).
 */
function matrixText(v: StatusView, rowLimit: number | undefined, note: (task: string) => string): string[] {
  let { agents, rows } = v.matrix;
  const total = v.matrix.total;
  if (!total) return ["  no open tasks"];
  const more: string[] = [];
  if (rowLimit !== undefined && (total > rowLimit || agents.length > MATRIX_AGENTS)) {
    const shownRows = rows.slice(0, rowLimit);
    const marked = agents.map((_, i) => i).filter((i) => shownRows.some((r) => r.cells[i] !== null)).slice(0, MATRIX_AGENTS);
    const cols = marked.length ? marked : agents.map((_, i) => i).slice(0, MATRIX_AGENTS);
    if (total > rowLimit) more.push(`  … ${total - rowLimit} more tasks`);
    if (cols.length < agents.length) more.push(`  … ${agents.length - cols.length} more agents`);
    agents = cols.map((i) => agents[i]!);
    rows = shownRows.map((r) => ({ ...r, cells: cols.map((i) => r.cells[i]!) }));
  }
  const tw = Math.max(4, ...rows.map((r) => r.task.length));
  const widths = agents.map((a) => Math.max(1, a.length));
  const header = `  ${"task".padEnd(tw)}  ${agents.map((a, i) => a.padEnd(widths[i]!)).join("  ")}`;
  const lines = [paint.dim(header)];
  for (const r of rows) {
    const cells = r.cells.map((c, i) => (c === "holds" ? paint.green("H") : c === "submitted" ? paint.yellow("R") : paint.dim(".")) + " ".repeat(widths[i]! - 1));
    lines.push(`  ${r.task.padEnd(tw)}  ${cells.join("  ")}  ${r.status.padEnd(7)} ${oneLine(r.objective, 40)}${note(r.task)}`);
  }
  return [...lines, ...more];
}

/** Matrix rows the bounded text view shows (its header and counts fill the section's other lines). */
export const MATRIX_ROWS = SECTION_LINES - 3;

/**
 * The text view. Unless `all`, each long section shows its first SECTION_LINES lines and counts
 * the rest (the matrix also keeps to the agents marked in its rows); --json is always complete.
 * `note`: the text after each line that names a task (newer-note.ts notes a task held back as newer).
 */
export function statusText(v: StatusView, header: string, now: Date, opts: { all?: boolean; note?: (task: string) => string } = {}): string {
  const text = fullStatusText(v, header, now, opts.all ? undefined : MATRIX_ROWS, opts.note ?? (() => ""));
  return opts.all ? text : boundSections(text, ALL_HINT, SECTION_LINES, unbuiltLines(v));
}

/** What a cut section says, after its count. */
export const ALL_HINT = "git handoff status --all shows everything";

function fullStatusText(v: StatusView, header: string, now: Date, matrixRows: number | undefined, note: (task: string) => string): string {
  // Bounded (matrixRows given): the sections are cut at SECTION_LINES, so only those are formatted.
  const lines = [header, overviewText(v, now, matrixRows === undefined ? undefined : SECTION_LINES, note)];
  lines.push(paint.bold("agents"));
  lines.push(v.roster.agents.length || v.roster.undeclared_holders.length ? rosterText(v.roster, matrixRows === undefined ? {} : { claims: ROSTER_CLAIMS }).split("\n").map((l) => `  ${l}`).join("\n") : "  no agent has declared a session");
  lines.push(paint.bold("claims (task x agent: H holds, R in review)"), ...matrixText(v, matrixRows, note));
  if (v.placements.length) {
    lines.push(paint.bold("where (worktree x branch x session)"));
    const ww = Math.max(...v.placements.map((p) => (p.worktree ?? "-").length));
    const bw = Math.max(...v.placements.map((p) => (p.branch ?? "(detached)").length));
    for (const p of v.placements) {
      lines.push(`  ${(p.worktree ?? "-").padEnd(ww)}  ${(p.branch ?? "(detached)").padEnd(bw)}  ${(p.session ?? "-").padEnd(12)} ${p.agent} (${p.status}, ${p.scope})`);
    }
  }
  if (v.blocked.length) {
    lines.push(paint.yellow("blocked"));
    // Noted for either task it names, as markStatus marks the edge (newer-note.ts).
    for (const e of v.blocked) lines.push(`  ${edgeText(e)}${note(e.task) || note(e.waits_on)}`);
  }
  if (v.review.length) {
    lines.push(paint.bold("review"));
    for (const r of v.review) {
      const ver = r.verification ? (r.verification.passed ? paint.green("passed") : paint.red("failed")) : "unverified";
      lines.push(`  ${r.task}  by ${r.submitted_by}  ${ver}${r.diff ? `  ${diffLine(r.diff)}` : ""}${note(r.task)}`);
    }
  }
  if (v.inbox.length) lines.push(`${paint.bold("inbox")}  ${v.inbox.map((i) => `${i.agent} ${i.waiting}`).join("  ")}`);
  if (v.conflicts) lines.push(`${v.conflicts.conflicting ? paint.red("conflicts") : paint.bold("conflicts")}: ${v.conflicts.summary}`);
  return lines.join("\n");
}

/** The file-lease section: holder, task, pattern, exclusive, expiry; leases that should not be there flagged. */
export function leaseSectionText(rows: LeaseRow[], opts: { all?: boolean } = {}): string {
  const text = fullLeaseSectionText(rows);
  return opts.all ? text : boundSections(text, ALL_HINT);
}

function fullLeaseSectionText(rows: LeaseRow[]): string {
  const lines = [paint.bold("file leases")];
  if (!rows.length) return [...lines, "  nobody holds a file lease"].join("\n");
  const aw = Math.max(...rows.map((r) => r.agent.length));
  const pw = Math.max(...rows.map((r) => r.pattern.length));
  for (const r of rows) {
    const flag = r.flags.length ? `  ${paint.red(`! ${flagText(r.flags)}`)}` : "";
    // Another agent's lease inside the takeover grace: expired here, but a write of its path is refused.
    const expiry = r.grace_until ? graceMark(r.expires_in_ms, r.expires_at, r.grace_until) : `expires ${formatUntil(r.expires_in_ms)}`;
    lines.push(`  ${r.agent.padEnd(aw)}  ${r.pattern.padEnd(pw)}  ${r.exclusive ? "exclusive" : "shared   "}  ${r.task ? `task ${r.task}` : "no task"}  ${expiry}${flag}`);
  }
  return lines.join("\n");
}
