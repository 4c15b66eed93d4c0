// git's packet trace of one `git push` (GIT_TRACE_PACKET, a file in the temp folder): whether the
// ref update commands went out is what separates "cannot have landed" from "may have landed". The
// file is removed once read, and at exit should the process end while the push runs (a second
// Ctrl-C ends a waiter with process.exit while its cancel is being pushed).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uniqueSuffix } from "./unique-name.ts";

/** Traces of pushes under way in this process. */
const live = new Set<string>();
let removedAtExit = false;

/** A new, empty trace file (made here, so an empty one means "nothing traced"), or null when none could be made. */
export function startPushTrace(): string | null {
  const path = join(tmpdir(), `git-handoff-push-${process.pid}-${uniqueSuffix()}.trace`);
  try {
    writeFileSync(path, "", { flag: "wx" });
  } catch {
    return null;
  }
  live.add(path);
  if (!removedAtExit) {
    removedAtExit = true;
    process.on("exit", () => {
      for (const p of live) rmSync(p, { force: true });
    });
  }
  return path;
}

/**
 * Whether the trace shows a ref update command written (`push> <old> <new> <ref>`; over smart HTTP
 * send-pack writes it as `git>` to the helper, which posts it: counted as sent); the file is
 * removed. No trace: assume the worst, which the caller then checks on the remote.
 */
export function endPushTrace(path: string | null): boolean {
  if (path === null) return true;
  let sent = true;
  try {
    sent = /packet:\s+(push|git)> [0-9a-f]{40,64} [0-9a-f]{40,64} refs\//.test(readFileSync(path, "latin1"));
  } catch {
    /* unreadable: as good as none */
  }
  rmSync(path, { force: true });
  live.delete(path);
  return sent;
}
