// How the demo tells its story: scenes, who did what, CLI output indented under it, and each
// expected catch checked and marked. Colour only on a terminal (and never with NO_COLOR).
import type { Run } from "./sandbox.ts";

export interface Expectation {
  label: string;
  ok: boolean;
  detail: string;
}

const useColour = () => !!process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: string) => (s: string) => (useColour() ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint("1");
export const dim = paint("2");
const green = paint("32");
const red = paint("31");
const yellow = paint("33");

export class Narrator {
  readonly expectations: Expectation[] = [];

  constructor(readonly out: (line: string) => void, private readonly clock: () => string) {}

  scene(title: string): void {
    this.out("");
    this.out(bold(`== ${title}`));
  }

  say(who: string, text: string): void {
    this.out(`[${this.clock()}] ${bold(who.padEnd(9))} ${text}`);
  }

  /** Shows what a command printed, indented; at most `max` lines. */
  show(r: Run | string, max = 12): void {
    const text = typeof r === "string" ? r : [r.stdout, r.stderr].filter((s) => s.trim()).join("\n");
    const lines = text.replace(/\s+$/, "").split("\n").filter((l) => l.trim() !== "");
    for (const l of lines.slice(0, max)) this.out(dim(`            | ${l}`));
    if (lines.length > max) this.out(dim(`            | ... (${lines.length - max} more lines)`));
  }

  raw(text: string): void {
    for (const l of text.replace(/\s+$/, "").split("\n")) this.out(l);
  }

  /** An expected catch (or outcome): recorded, and marked in the story. */
  expect(label: string, ok: boolean, detail = "", kind: "caught" | "checked" = "caught"): boolean {
    this.expectations.push({ label, ok, detail });
    this.out(ok ? `            ${green(`${kind}:`)} ${label}` : `            ${red("MISSING:")} ${label}${detail ? ` (${detail})` : ""}`);
    return ok;
  }

  note(text: string): void {
    this.out(`            ${yellow("->")} ${text}`);
  }

  get failed(): Expectation[] {
    return this.expectations.filter((e) => !e.ok);
  }
}
