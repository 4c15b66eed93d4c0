// One line of `git handoff doctor`: what was checked, how it stands, and the command that fixes it.
export interface Check {
  name: string;
  /** unknown: the check could not be made (never read it as ok). */
  status: "ok" | "warn" | "fail" | "unknown";
  detail: string;
  fix?: string;
}
