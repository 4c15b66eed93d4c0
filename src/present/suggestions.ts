// What to do next, worded for the front end that shows it. The core words its refusals'
// suggestions as CLI commands (it has to pick one wording); an MCP client should read the tool
// to call instead. Both wordings live here, so the CLI and the MCP server never disagree on
// what a step is called.
import type { Refusal, Suggestion } from "../core/errors.ts";
import { handoffCommand, SHELL_WORD, shellUnquote } from "../core/shell-quote.ts";
import type { Task } from "../core/task.ts";

export type FrontEnd = "cli" | "mcp";

/** One step an agent can take: the CLI command and the MCP tool call that do the same. */
export interface Step {
  cli: string;
  tool: string;
  arguments?: Record<string, unknown>;
}

/** A tool call suggested in a result's `next`: the tool, its arguments, and why. */
export interface NextCall {
  tool: string;
  arguments?: Record<string, unknown>;
  why: string;
}

/** `tool {"key": value}`, spaced as people write it. */
const call = (tool: string, args?: Record<string, unknown>) =>
  args && Object.keys(args).length ? `${tool} {${Object.entries(args).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(", ")}}` : tool;

/** How `step` reads in `front`'s words. */
export function spell(step: Step, front: FrontEnd): string {
  return front === "cli" ? step.cli : call(step.tool, step.arguments);
}

export function nextCall(step: Step, why: string): NextCall {
  return { tool: step.tool, ...(step.arguments ? { arguments: step.arguments } : {}), why };
}

/** The steps, by what they do. The CLI spelling of each is what the core's suggestions use. */
export const steps = {
  claim: (id: string): Step => ({ cli: handoffCommand("claim", id), tool: "claim_task", arguments: { id } }),
  claimNext: (): Step => ({ cli: "git handoff claim --next", tool: "claim_next" }),
  release: (id: string): Step => ({ cli: handoffCommand("release", id), tool: "release_task", arguments: { id } }),
  renew: (id: string): Step => ({ cli: handoffCommand("renew", id), tool: "renew_task", arguments: { id } }),
  done: (id: string): Step => ({ cli: handoffCommand("done", id), tool: "complete_task", arguments: { id } }),
  waitTask: (id: string): Step => ({ cli: handoffCommand("task", "show", id), tool: "wait_task", arguments: { id } }),
  show: (id: string): Step => ({ cli: handoffCommand("task", "show", id), tool: "get_task", arguments: { id } }),
  review: (): Step => ({ cli: "git handoff review", tool: "review_queue" }),
  accept: (id: string): Step => ({ cli: handoffCommand("review", "accept", id), tool: "accept_review", arguments: { id } }),
  reject: (id: string): Step => ({ cli: `${handoffCommand("review", "reject", id)} --reason TEXT`, tool: "reject_review", arguments: { id, reason: "what to fix" } }),
  ready: (): Step => ({ cli: "git handoff ready", tool: "ready_tasks" }),
  inbox: (): Step => ({ cli: "git handoff inbox", tool: "inbox" }),
  leases: (agent?: string): Step => ({ cli: agent ? handoffCommand("leases", "--agent", agent) : handoffCommand("leases"), tool: "list_leases", ...(agent ? { arguments: { agent } } : {}) }),
  unlease: (pattern: string): Step => ({ cli: handoffCommand("unlease", pattern), tool: "release_files", arguments: { paths: [pattern] } }),
  undepend: (id: string, on: string): Step => ({ cli: handoffCommand("undepend", id, "--on", on), tool: "undepend", arguments: { id, on } }),
  sync: (): Step => ({ cli: "git handoff sync", tool: "sync" }),
  agents: (): Step => ({ cli: "git handoff agents", tool: "list_agents" }),
  status: (): Step => ({ cli: "git handoff status", tool: "overview" }),
  declare: (): Step => ({ cli: "git handoff session start --objective TEXT", tool: "declare_session", arguments: { objective: "TEXT" } }),
  ask: (agent: string, target: string): Step => ({ cli: handoffCommand("ask", agent, "--release", target), tool: "request_release", arguments: { agent, release: target } }),
  answer: (request: string, verdict: "release" | "keep"): Step => ({ cli: handoffCommand("answer", request, `--${verdict}`), tool: "answer_request", arguments: { request, answer: verdict } }),
};

/**
 * CLI commands as the core writes them, and the tool call for each. Order matters: the more
 * specific spelling first. A step with no tool (choosing the sync remote) is worded as a
 * person's step. Built on first use: only the MCP server words steps as tools, and the table (40
 * expressions, some compiled from strings) was ~20 KB of a one-shot command's start.
 */
let cliToTool: [RegExp, (...m: string[]) => string][] | undefined;
const cliToToolRules = () => (cliToTool ??= buildCliToTool());
function buildCliToTool(): [RegExp, (...m: string[]) => string][] {
  const W = `(${SHELL_WORD})`;
  const cmd = (source: string) => new RegExp(source, "g");
  return [
    // Before the rules of single commands, which would read "or" as a task id.
    [/git handoff release or git handoff unlease/g, () => "release_task or release_files"],
    [/git handoff claim --next/g, () => spell(steps.claimNext(), "mcp")],
    [/git handoff ready --claim/g, () => spell(steps.claimNext(), "mcp")],
    [/git handoff ready\b/g, () => spell(steps.ready(), "mcp")],
    [cmd(String.raw`git handoff ask ${W} --release ${W}`), (_, agent, target) => spell(steps.ask(agent!, target!), "mcp")],
    [cmd(String.raw`git handoff answer ${W} --(release|keep)`), (_, id, verdict) => spell(steps.answer(id!, verdict as "release" | "keep"), "mcp")],
    [cmd(String.raw`git handoff claim ${W}`), (_, id) => spell(steps.claim(id!), "mcp")],
    [cmd(String.raw`git handoff release ${W}`), (_, id) => spell(steps.release(id!), "mcp")],
    [cmd(String.raw`git handoff renew ${W}`), (_, id) => spell(steps.renew(id!), "mcp")],
    [cmd(String.raw`git handoff done ${W}`), (_, id) => spell(steps.done(id!), "mcp")],
    [cmd(String.raw`git handoff task show ${W}`), (_, id) => spell(steps.show(id!), "mcp")],
    [cmd(String.raw`git handoff review accept\|reject ${W}`), (_, id) => `${call("accept_review", { id })} or ${call("reject_review", { id, reason: "what to fix" })}`],
    [cmd(String.raw`git handoff review accept ${W}`), (_, id) => spell(steps.accept(id!), "mcp")],
    [cmd(String.raw`git handoff review reject ${W}`), (_, id) => call("reject_review", { id })],
    [/git handoff review\b/g, () => spell(steps.review(), "mcp")],
    [cmd(String.raw`git handoff unlease ${W}`), (_, p) => spell(steps.unlease(p!), "mcp")],
    [cmd(String.raw`git handoff leases --agent ${W}`), (_, a) => spell(steps.leases(a), "mcp")],
    [/git handoff leases\b/g, () => spell(steps.leases(), "mcp")],
    [cmd(String.raw`git handoff undepend ${W} --on ${W}`), (_, id, on) => spell(steps.undepend(id!, on!), "mcp")],
    [/git handoff session start --objective TEXT/g, () => spell(steps.declare(), "mcp")],
    // A dependency not done: no tool claims past it (the CLI's --force is a person's call).
    [/, or claim it anyway: --force/g, () => ", or take other work until it is done (only a person claims past it, from the CLI)"],
    // Option names in messages about a tool's arguments.
    [/invalid --(ttl|since|until)\b/g, (_, name) => `invalid ${name}`],
    [/session start needs --objective TEXT/g, () => "a session needs an objective"],
    [/--files (globs?)\b/g, (_, g) => `files ${g}`],
    [/without --task\b/g, () => "without task"],
    [/--session must\b/g, () => "session_id must"],
    [/--awaits is\b/g, () => "awaits is"],
    [/\(given with --(on|after)\)/g, (_, name) => `(given as ${name})`],
    // Capacity: one more claim is the same call with a flag; declaring more is a person's step.
    [/claim anyway: --over-capacity/g, () => "claim anyway: the same call with over_capacity: true"],
    [/git handoff session start --objective \.\.\. --capacity N/g, () => "a person declares a larger capacity for this agent (the CLI's session start --capacity N)"],
    [/git handoff status\b/g, () => spell(steps.status(), "mcp")],
    [/git handoff (task list|tasks)\b/g, () => "list_tasks"],
    [/git handoff events\b/g, () => "events"],
    [/git handoff inbox\b/g, () => spell(steps.inbox(), "mcp")],
    [cmd(String.raw`git handoff ack ${W}`), (_, id) => call("ack_handoff", { id })],
    [/git handoff agents\b/g, () => spell(steps.agents(), "mcp")],
    // No tool on purpose: overwriting the remote's refused refs is a person's decision.
    [/git handoff sync --repair( --force)?/g, (m) => `a person's ${m} in a shell (no tool overwrites the remote)`],
    [/git handoff sync\b(?! (pushes|fetches|confirms|--repair))/g, () => spell(steps.sync(), "mcp")],
    // No tool on purpose: a person chooses where coordination state is shared.
    [/(?:choose one|set it with): git handoff remote <name>/g, () => "a person chooses one in a shell (the CLI's remote verb); no tool sets it"],
  ];
}

/** A suggestion's text in `front`'s words. */
export function suggestionText(detail: string, front: FrontEnd): string {
  if (front === "cli") return detail;
  // The captured arguments are shell words: a tool argument is the value the shell would pass.
  const unquoted = (m: unknown[]) => [m[0], ...m.slice(1, -2).map((x) => (typeof x === "string" ? shellUnquote(x) : x))] as string[];
  return cliToToolRules().reduce((d, [re, to]) => d.replace(re, (...m: unknown[]) => to(...unquoted(m))), detail);
}

/** The refusal as `front` should show it: its suggestions name that front end's commands. */
export function refusalFor(refusal: Refusal, front: FrontEnd): Refusal {
  if (front === "cli") return refusal;
  // The message too: a refusal written once for both front ends may name a CLI command or option.
  const message = suggestionText(refusal.message, front);
  if (!refusal.suggestions?.length) return message === refusal.message ? refusal : { ...refusal, message };
  const suggestions: Suggestion[] = refusal.suggestions.map((s) => ({ ...s, detail: suggestionText(s.detail, front) }));
  return { ...refusal, message, suggestions };
}

/** `verification_failed`: what to do, in either wording. */
export function verificationFailedSuggestions(id: string, front: FrontEnd): Suggestion[] {
  return [
    { action: "retry", detail: `fix it and run ${spell(steps.done(id), front)} again (the output tail is in data.verification.output_tail)` },
    { action: "work_elsewhere", detail: `or give it back: ${spell(steps.release(id), front)}` },
  ];
}

/** The refusal for a verification that did not pass: the same code, message and data in both front ends. */
export function verificationFailure(t: Task, front: FrontEnd): Refusal {
  const v = t.review!.verification!;
  const how = v.timed_out ? "timed out" : `failed (exit ${v.exit_code ?? v.signal})`;
  return {
    code: "verification_failed",
    message: `verification of ${t.id} ${how} after ${(v.duration_ms / 1000).toFixed(1)}s: ${v.command}; recorded on the task, which stays ${t.claim ? `with ${t.claim.agent}` : t.status}`,
    data: { task: t.id, verification: v },
    suggestions: verificationFailedSuggestions(t.id, front),
  };
}
