import { formatUntil } from "../core/duration.ts";
import { formatAddress } from "../core/address.ts";
import type { HandoffEvent } from "../core/event.ts";
import type { Overview } from "../core/overview.ts";
import type { ShownTask } from "../core/task-view.ts";
import { graceMark } from "./grace-mark.ts";
import { oneLine } from "../core/one-line.ts";
import { paint } from "./output.ts";
import { neutraliseLine } from "./untrusted.ts";

function until(iso: string, now: Date): string {
  const ms = Date.parse(iso) - now.getTime();
  return formatUntil(ms);
}


/** Another agent's claim inside the takeover grace: when it expired here and until when it stands; else when it ends. */
function claimUntil(t: ShownTask, now: Date): string {
  const c = t.claim!;
  return t.grace_until ? graceMark(Date.parse(c.expires_at) - now.getTime(), c.expires_at, t.grace_until) : `until ${until(c.expires_at, now)}`;
}

export function taskLine(t: ShownTask, now: Date): string {
  const holder = t.claim ? `  ${t.claim.agent} (${claimUntil(t, now)})` : "";
  return `${t.id.padEnd(12)} ${t.status.padEnd(9)} p${String(t.priority).padEnd(3)} ${oneLine(t.objective, 60)}${holder}`;
}

/** A value written by another agent, its further lines indented under the label's column (so none reads as a label of its own). */
const continued = (text: string) => text.replace(/\r?\n/g, "\n            ");

export function taskDetail(t: ShownTask, now: Date): string {
  const lines = [
    `${paint.bold(t.id)}  ${t.status}`,
    // Continuation lines indented: an objective cannot pose as one of the labelled lines.
    `objective:  ${continued(t.objective)}`,
    `priority:   ${t.priority}`,
  ];
  if (t.scope.length) lines.push(`scope:      ${t.scope.join(" ")}`);
  if (t.to) lines.push(`to:         ${formatAddress(t.to)}`);
  if (t.claim) {
    const c = t.claim;
    lines.push(`holder:     ${c.agent} (fence ${c.fence}, ${c.scope}${c.worktree ? ` ${c.worktree}` : ""}${c.branch ? ` on ${c.branch}` : ""})`);
    lines.push(t.grace_until ? `lease:      ${claimUntil(t, now)}` : `lease:      until ${c.expires_at} (${until(c.expires_at, now)})`);
  }
  lines.push(`attempts:   ${t.attempts} expired of ${t.max_attempts} allowed`);
  if (t.result?.commit) lines.push(`commit:     ${t.result.commit}`);
  if (t.result?.note) lines.push(`note:       ${continued(t.result.note)}`);
  if (t.result?.reason) lines.push(`reason:     ${continued(t.result.reason)}`);
  lines.push(`created:    ${t.created_at} by ${t.created_by}`, `updated:    ${t.updated_at}`);
  return lines.join("\n");
}

/** At most three paths, each on one line and cut to fit, then how many more: a line stays a line. */
function pathsField(paths: string[]): string {
  const shown = paths.slice(0, 3).map((p) => oneLine(neutraliseLine(p), 80));
  return shown.join(",") + (paths.length > 3 ? ` +${paths.length - 3} more` : "");
}

/** Widths of the leading columns of an event line: time, type, task, agent. */
type EventColumns = [at: number, type: number, task: number, agent: number];
const eventColumns = (e: HandoffEvent): string[] => [e.at, e.type, e.task || "-", e.agent];

/** The event listing, its time, type, task and agent columns as wide as their widest value. */
export function eventLines(events: HandoffEvent[]): string[] {
  const widths: EventColumns = [0, 0, 0, 0];
  for (const e of events) eventColumns(e).forEach((v, i) => (widths[i] = Math.max(widths[i]!, v.length)));
  return events.map((e) => eventLine(e, widths));
}

export function eventLine(e: HandoffEvent, widths: EventColumns = [0, 9, 0, 0]): string {
  const bits = eventColumns(e).map((v, i) => v.padEnd(widths[i]!));
  // What a lease, a drift notice or a release request is about: its paths (or patterns), its id.
  if (e.paths?.length) bits.push(`paths=${pathsField(e.paths)}${e.exclusive ? " (exclusive)" : ""}`);
  if (e.request) bits.push(`request=${e.request}`);
  if (e.fence !== undefined) bits.push(`fence=${e.fence}`);
  if (e.expires_at && (e.type === "claimed" || e.type === "renewed" || e.type === "leased")) bits.push(`until=${e.expires_at}`);
  if (e.holder) bits.push(`holder=${e.holder}`);
  if (e.by && e.by !== e.agent) bits.push(`by=${e.by}`);
  if (e.commit) bits.push(`commit=${e.commit.slice(0, 12)}`);
  if (e.on) bits.push(`on=${e.on}`);
  if (e.handoff) bits.push(`handoff=${e.handoff}`);
  if (e.memory) bits.push(`memory=${e.memory}`);
  if (e.doc) bits.push(`doc=${e.doc}${e.bytes !== undefined ? ` (${e.bytes} bytes)` : ""}`);
  if (e.passed !== undefined) bits.push(`passed=${e.passed}`);
  if (e.code) bits.push(`code=${e.code}`);
  if (e.hook) bits.push(`hook=${e.hook}`);
  if (e.verdict) bits.push(`verdict=${e.verdict}`);
  if (e.branches) bits.push(`branches=${e.branches.join(",")}`);
  if (e.answer) bits.push(`answer=${e.answer}`);
  if (e.until) bits.push(`until=${e.until}`);
  if (e.reason) bits.push(`reason=${JSON.stringify(oneLine(e.reason, 60))}`);
  if (e.type === "loop" && e.note) bits.push(`note=${JSON.stringify(oneLine(e.note, 60))}`);
  bits.push(`[${e.scope}${e.branch ? ` ${e.branch}` : ""}]`);
  return bits.join("  ");
}

/** The overview's sections that a bounded view builds in part (Overview.hidden), by their first lines. */
const HEADS = { held: () => paint.bold("held"), expiring: () => paint.yellow("expiring soon"), expired: () => paint.red("expired (free to claim)") };

/**
 * The lines of the overview's sections not built (Overview.hidden), by each section's first line, for
 * boundSections to count as the blank lines overviewText leaves out when given `rendered`: 4,980 at
 * 10,000 tasks, each one pushed, joined and split again.
 */
export function unbuiltLines(o: Overview): Map<string, number> {
  const h = o.hidden;
  return new Map(h ? [[HEADS.held(), h.held], [HEADS.expiring(), h.expiring_soon], [HEADS.expired(), h.expired]] : []);
}

/**
 * The overview's text. With `rendered`, each section's lines past the first `rendered` are left
 * blank (one space: still counted as the section's lines, never shown): a caller that cuts
 * sections (bounded-text.ts) formats 20 held claims, not 7,500; the lines not built at all
 * (Overview.hidden) it counts itself (unbuiltLines). `note`: the text after a claim's
 * line (newer-note.ts notes a task held back as newer).
 */
export function overviewText(o: Overview, now: Date, rendered?: number, note: (task: string) => string = () => ""): string {
  const c = o.counts;
  const upTo = rendered ?? Infinity;
  const lines = [
    paint.bold("tasks"),
    `  todo ${c.todo}  claimed ${c.claimed}  done ${c.done}  failed ${c.failed}  cancelled ${c.cancelled}  review ${c.review}`,
  ];
  lines.push(HEADS.held());
  if (!o.holders.length) lines.push("  nobody holds a task");
  let shown = 0;
  for (const h of o.holders) {
    for (const t of h.tasks) {
      if (shown++ >= upTo) {
        lines.push(" ");
        continue;
      }
      const where = `${t.scope}${t.branch ? ` ${t.branch}` : ""}${t.worktree ? ` ${t.worktree}` : ""}`;
      // Another agent's claim inside the takeover grace: expired here, but a claim of it is refused.
      const expiry = t.grace_until ? graceMark(t.expires_in_ms, t.expires_at, t.grace_until) : `until ${until(t.expires_at, now).padEnd(8)}`;
      lines.push(`  ${h.agent.padEnd(24)} ${t.task.padEnd(12)} ${expiry} ${paint.dim(where)}  ${oneLine(t.objective, 40)}${note(t.task)}`);
    }
  }
  // Lines of a bounded view not built (buildOverview's `shown`): counted as lines all the same; by
  // the caller that cuts the sections, where it renders them (unbuiltLines), else as blank lines.
  const blank = (n: number | undefined) => {
    if (rendered === undefined) for (let k = 0; k < (n ?? 0); k++) lines.push(" ");
  };
  blank(o.hidden?.held);
  if (o.expiring_soon.length) {
    lines.push(HEADS.expiring());
    o.expiring_soon.forEach((t, i) => lines.push(i >= upTo ? " " : `  ${t.task.padEnd(12)} ${t.agent} ${until(t.expires_at, now)}${note(t.task)}`));
    blank(o.hidden?.expiring_soon);
  }
  if (o.expired.length) {
    lines.push(HEADS.expired());
    o.expired.forEach((t, i) => lines.push(i >= upTo ? " " : `  ${t.task.padEnd(12)} ${t.agent} lease ran out ${until(t.expires_at, now)}${note(t.task)}`));
    blank(o.hidden?.expired);
  }
  return lines.join("\n");
}
