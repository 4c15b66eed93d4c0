// The loose task refs of a one-shot command, from the record kept with their folders' stats
// (ref-folder-record.ts, `.git/handoff/task-ref-folders`) while those stand, else read and
// recorded. Every one-shot listing of the task refs takes them so: a view's key (status), `task
// list`, `ready`, `claim --next` and a claim's capacity check (claimed-index.ts). Between two packs
// each read some 50-240 loose files, one `openat`, `read` and `close` each, though nothing had
// moved since the last command. Sound for every move git makes (a new file renamed over a ref, a
// ref deleted, a pack); a ref file written over in place, by hand, is seen at the next move.
import { join } from "node:path";
import { recordedText, recordText } from "./ref-folder-record.ts";

export const taskRefRecordPath = (commonDir: string) => join(commonDir, "handoff", "task-ref-folders");

/**
 * The loose refs under `prefix` (a folder of `refDir`, with its slash) as recorded at `path`, or
 * `read()` now and, with `keep`, recorded there. A claim moves a task ref right after it lists
 * them (its capacity check, claim --next's candidates): what it would record is out of date at
 * once, so it only reads the record (a file made, written, renamed and unlinked for nothing).
 */
export function recordedLooseRefs(path: string, refDir: string, prefix: string, read: () => Map<string, string>, keep: boolean): Map<string, string> {
  const take = () => {
    let text = "";
    for (const [name, oid] of read()) text += `${name} ${oid}\n`;
    return text;
  };
  const text = recordedText(path, refDir) ?? (keep ? recordText(path, refDir, prefix.replace(/\/$/, ""), take) : take());
  const loose = new Map<string, string>();
  for (const line of text.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0) loose.set(line.slice(0, space), line.slice(space + 1));
  }
  return loose;
}
