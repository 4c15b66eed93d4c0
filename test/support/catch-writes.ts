// What the tests of a deny or warn answer's catch record watch: the edit payload, the hook_caught
// events on the agent's log ref, the pending catch files, and a wait for the detached writer.
import { existsSync, readdirSync } from "node:fs";
import { gitOut } from "./repo.ts";

/** A Claude Code Edit payload for `file` in `repo`. */
export const edit = (repo: string, file: string) => JSON.stringify({ cwd: repo, tool_name: "Edit", tool_input: { file_path: `${repo}/${file}` } });

/** How many hook_caught events `agent`'s log ref holds (0 before it exists). */
export function caughtEvents(repo: string, agent = "bob"): number {
  try {
    return gitOut(repo, "log", "--format=%B", `refs/handoff/log/${agent}`).split("\n").filter((l) => l.includes("hook_caught")).length;
  } catch {
    return 0;
  }
}

/** The catch records waiting for their writer. */
export const pendingCatches = (repo: string) => (existsSync(`${repo}/.git/handoff/catch-pending`) ? readdirSync(`${repo}/.git/handoff/catch-pending`) : []);

/** Waits (30 s at most) until `ok` holds. */
export async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within 30 s: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
