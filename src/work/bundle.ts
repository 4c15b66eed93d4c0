// Task inputs and results as git objects: a commit whose tree holds a JSON record plus folders of
// flat files (`context/`, `files/`). One ref per task and kind (refs/handoff/inputs/<id>,
// refs/handoff/results/<id>), so clones fetch a task's files only when they need them.
import type * as z from "zod/mini";
import { fail } from "../core/errors.ts";
import { flatNameProblem, MAX_FILES_BYTES, MAX_TASK_FILES } from "../core/task-files.ts";
import { validateTaskId } from "../core/ids.ts";
import { commitObject, FORMAT_MARKER, parseCommit, readRecord, readTyped } from "../store/codec.ts";
import { REF_ROOT, type Store } from "../store/store.ts";

export const INPUTS_PREFIX = `${REF_ROOT}inputs/`;
export const RESULTS_PREFIX = `${REF_ROOT}results/`;
export const INPUTS_FILE = "inputs.json";
export const RESULT_FILE = "result.json";

export const inputsRef = (id: string) => INPUTS_PREFIX + validateTaskId(id);
export const resultsRef = (id: string) => RESULTS_PREFIX + validateTaskId(id);

type Entry = { name: string; mode: "100644" | "40000"; oid: string };

function encodeEntries(entries: Entry[]): Buffer {
  // git orders tree entries by name, a folder as if its name ended in "/".
  const key = (e: Entry) => (e.mode === "40000" ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.oid, "hex")]));
}

/** Writes the record and the folders of files; returns the commit. Names are checked by the caller. */
export function writeBundle(
  store: Store,
  opts: { file: string; record: unknown; folders: Record<string, Map<string, Buffer>>; message: string; parent: string | null },
): string {
  const w = store.writer;
  const entries: Entry[] = [
    { name: "format", mode: "100644", oid: w.write("blob", FORMAT_MARKER) },
    { name: opts.file, mode: "100644", oid: w.write("blob", JSON.stringify(opts.record, null, 2) + "\n") },
  ];
  for (const [folder, files] of Object.entries(opts.folders)) {
    if (!files.size) continue;
    const inner: Entry[] = [...files].map(([name, data]) => ({ name, mode: "100644", oid: w.write("blob", data) }));
    entries.push({ name: folder, mode: "40000", oid: w.write("tree", encodeEntries(inner)) });
  }
  const tree = w.write("tree", encodeEntries(entries));
  return w.write("commit", commitObject({ tree, parent: opts.parent, author: store.actor.agent, at: store.now(), message: opts.message }));
}

function parseEntries(data: Buffer, oidBytes: number): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const sp = data.indexOf(32, i);
    const nul = data.indexOf(0, sp);
    out.set(data.subarray(sp + 1, nul).toString("utf8"), data.subarray(nul + 1, nul + 1 + oidBytes).toString("hex"));
    i = nul + 1 + oidBytes;
  }
  return out;
}

/** The record at `commit`, and a reader for the files of one folder (names checked again here). */
export async function readBundle<T>(store: Store, ref: string, commit: string, file: string, schema: z.ZodMiniType<T>) {
  const { record } = await readRecord(store.reader, store.oidBytes, commit, ref, file, schema);
  const treeOid = parseCommit(await readTyped(store.reader, commit, "commit", ref)).tree;
  const top = parseEntries(await readTyped(store.reader, treeOid, "tree", ref), store.oidBytes);
  return {
    record,
    /**
     * Every file of `folder` with its bytes. It came from another machine: a name that is not flat,
     * too many files or more than `maxBytes` together is refused, never written anywhere.
     */
    async files(folder: string, maxBytes = MAX_FILES_BYTES): Promise<Map<string, Buffer>> {
      const out = new Map<string, Buffer>();
      const oid = top.get(folder);
      if (!oid) return out;
      const entries = parseEntries(await readTyped(store.reader, oid, "tree", ref), store.oidBytes);
      if (entries.size > MAX_TASK_FILES) fail("corrupt_state", `${ref} holds ${entries.size} files in ${folder}/; at most ${MAX_TASK_FILES}`, { ref });
      let total = 0;
      for (const [name, blob] of entries) {
        const problem = flatNameProblem(name);
        if (problem) fail("corrupt_state", `${ref} holds a file ${JSON.stringify(name.slice(0, 80))} that ${problem}`, { ref });
        const data = await readTyped(store.reader, blob, "blob", ref);
        total += data.length;
        if (total > maxBytes) fail("corrupt_state", `${ref} holds more than ${maxBytes} bytes of files in ${folder}/`, { ref });
        out.set(name, data);
      }
      return out;
    },
  };
}
