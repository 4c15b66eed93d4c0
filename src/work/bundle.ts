// Task inputs and results as git objects: a commit whose tree holds a JSON record plus folders of
// flat files (`context/`, `files/`). One ref per task and kind (refs/handoff/inputs/<id>,
// refs/handoff/results/<id>), so clones fetch a task's files only when they need them.
import type * as z from "zod/mini";
import { fail } from "../core/errors.ts";
import { flatNameProblem, MAX_FILES_BYTES, MAX_TASK_FILES } from "../core/task-files.ts";
import { validateTaskId } from "../core/ids.ts";
import { encodeTree, type TreeEntry } from "../git/tree-object.ts";
import { commitObject, FORMAT_MARKER, parseCommit, parseTree, readRecord, readTyped } from "../store/codec.ts";
import { REF_ROOT, type Store } from "../store/store.ts";

export const INPUTS_PREFIX = `${REF_ROOT}inputs/`;
export const RESULTS_PREFIX = `${REF_ROOT}results/`;
export const INPUTS_FILE = "inputs.json";
export const RESULT_FILE = "result.json";

export const inputsRef = (id: string) => INPUTS_PREFIX + validateTaskId(id);
export const resultsRef = (id: string) => RESULTS_PREFIX + validateTaskId(id);

/** Writes the record and the folders of files; returns the commit. Names are checked by the caller. */
export function writeBundle(
  store: Store,
  opts: { file: string; record: unknown; folders: Record<string, Map<string, Buffer>>; message: string; parent: string | null },
): string {
  const w = store.writer;
  const entries: TreeEntry[] = [
    { name: "format", mode: "100644", oid: w.write("blob", FORMAT_MARKER) },
    { name: opts.file, mode: "100644", oid: w.write("blob", JSON.stringify(opts.record, null, 2) + "\n") },
  ];
  for (const [folder, files] of Object.entries(opts.folders)) {
    if (!files.size) continue;
    const inner: TreeEntry[] = [...files].map(([name, data]) => ({ name, mode: "100644", oid: w.write("blob", data) }));
    entries.push({ name: folder, mode: "40000", oid: w.write("tree", encodeTree(inner)) });
  }
  const tree = w.write("tree", encodeTree(entries));
  return w.write("commit", commitObject({ tree, parent: opts.parent, author: store.actor.agent, at: store.now(), message: opts.message }));
}

/** The record at `commit`, and a reader for the files of one folder (names checked again here). */
export async function readBundle<T>(store: Store, ref: string, commit: string, file: string, schema: z.ZodMiniType<T>) {
  const { record } = await readRecord(store.reader, store.oidBytes, commit, ref, file, schema);
  const treeOid = parseCommit(await readTyped(store.reader, commit, "commit", ref)).tree;
  const top = parseTree(await readTyped(store.reader, treeOid, "tree", ref), store.oidBytes, ref);
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
      const entries = parseTree(await readTyped(store.reader, oid, "tree", ref), store.oidBytes, ref);
      if (entries.size > MAX_TASK_FILES) fail("corrupt_state", `${ref} holds ${entries.size} files in ${folder}/; at most ${MAX_TASK_FILES}`, { ref });
      let total = 0;
      for (const [name, blob] of entries) {
        const problem = flatNameProblem(name);
        if (problem) fail("corrupt_state", `${ref} holds a file ${JSON.stringify(name.slice(0, 80))} that ${problem}`, { ref });
        // Measured before it is read: the bound holds for memory too.
        const data = await readTyped(store.reader, blob, "blob", ref, { bytes: maxBytes - total, tooBig: () => `${ref} holds more than ${maxBytes} bytes of files in ${folder}/` });
        total += data.length;
        out.set(name, data);
      }
      return out;
    },
  };
}
