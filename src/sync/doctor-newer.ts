// A record written by a newer git-handoff (code newer_format) stops only the doctor checks that
// read it: they are reported as one failed check naming it, and every other check still runs.
import { HandoffError } from "../core/errors.ts";
import type { Check } from "./doctor-check.ts";

export interface NewerFormatGuard {
  /** The checks `run` makes, or none when a record it reads is from a newer git-handoff. */
  run(name: string, run: () => Promise<Check[]>): Promise<Check[]>;
  /** The one failed check for every record from a newer git-handoff met, or null. */
  check(): Check | null;
}

export function newerFormatGuard(): NewerFormatGuard {
  const met = new Map<string, string[]>();
  return {
    async run(name, run) {
      try {
        return await run();
      } catch (e) {
        if (!(e instanceof HandoffError) || e.code !== "newer_format") throw e;
        const skipped = met.get(e.message) ?? [];
        met.set(e.message, [...skipped, name]);
        return [];
      }
    },
    check() {
      if (!met.size) return null;
      const detail = [...met].map(([message, skipped]) => `${message} (not checked: ${skipped.join(", ")})`).join("; ");
      return { name: "newer-format", status: "fail", detail, fix: "upgrade git-handoff on this machine (another clone runs a newer version)" };
    },
  };
}
