// Addresses: who may take a task. `KIND@MACHINE` (that kind of agent on that machine), `KIND`
// (that kind anywhere), `@MACHINE` (anyone on that machine), or none (anyone). An agent's kind is
// its name up to the first `@`; its machine is the one its clone declares (git config
// handoff.machine), never a parse of its name. Addressing routes work; it is not access control.
import * as z from "zod/mini";
import type { Refusal } from "./errors.ts";
import { refComponentProblem } from "./ids.ts";
import { lazySchema } from "./schema-helpers.ts";

export const Address = lazySchema(() =>
  z.object({
    kind: z.nullable(z.string()),
    machine: z.nullable(z.string()),
  }),
);
export type Address = z.infer<typeof Address>;

/** Who is asking to take a task: its name and the machine its clone declares. */
export interface Taker {
  agent: string;
  machine: string | null;
}

/** Why `part` cannot be a kind or a machine name, or null. */
function partProblem(part: string): string | null {
  if (part.includes("@")) return "may not contain '@'";
  return refComponentProblem(part);
}

/** Why `name` cannot be a machine name (git config handoff.machine), or null. */
export function machineProblem(name: string): string | null {
  return partProblem(name);
}

/** Parses `--to`; an empty string is refused (leave the option out to address anyone). */
export function parseAddress(text: string): { ok: true; address: Address } | { ok: false; message: string } {
  const at = text.indexOf("@");
  const kind = at < 0 ? text : text.slice(0, at);
  const machine = at < 0 ? null : text.slice(at + 1);
  const bad = (what: string, value: string, problem: string) => ({ ok: false as const, message: `--to ${JSON.stringify(text.slice(0, 80))}: the ${what} ${JSON.stringify(value.slice(0, 80))} ${problem}; use KIND@MACHINE, KIND or @MACHINE` });
  if (!kind && !machine) return { ok: false, message: `--to ${JSON.stringify(text)} names no one; use KIND@MACHINE, KIND or @MACHINE` };
  if (kind) {
    const p = partProblem(kind);
    if (p) return bad("kind", kind, p);
  }
  if (machine !== null) {
    const p = partProblem(machine);
    if (p) return bad("machine", machine, p);
  }
  return { ok: true, address: { kind: kind || null, machine } };
}

export function formatAddress(a: Address): string {
  return `${a.kind ?? ""}${a.machine !== null ? `@${a.machine}` : ""}`;
}

/** The kind of an agent: its name up to the first `@` (`codex@pc` -> `codex`). */
export function agentKind(agent: string): string {
  const at = agent.indexOf("@");
  return at < 0 ? agent : agent.slice(0, at);
}

export function addressMatches(to: Address | null | undefined, who: Taker): boolean {
  if (!to) return true;
  if (to.kind !== null && to.kind !== agentKind(who.agent)) return false;
  if (to.machine !== null && to.machine !== who.machine) return false;
  return true;
}

/** The refusal for a task addressed to someone else; null when `who` may take it. */
export function addressRefusal(task: { id: string; to?: Address | null | undefined }, who: Taker): Refusal | null {
  if (addressMatches(task.to, who)) return null;
  const to = formatAddress(task.to!);
  return {
    code: "addressed_elsewhere",
    message: `task ${task.id} is addressed to ${to}; ${who.agent}${who.machine ? ` on ${who.machine}` : ""} does not match`,
    data: { task: task.id, to, agent: who.agent, kind: agentKind(who.agent), machine: who.machine },
    suggestions: [{ action: "work_elsewhere", detail: "take other work: git handoff claim --next (it skips tasks addressed elsewhere)" }],
  };
}
