// Documents at refs/handoff/docs/<name>: one ref per document, one commit per version (the event in
// its message, the text as `content` in its tree), so the ref's history is the document's history.
import { fail, HandoffError } from "../core/errors.ts";
import type { HandoffEvent } from "../core/event.ts";
import { docContentProblem, validateDocName } from "../core/shared-doc.ts";
import { blobDiff } from "../git/blob-diff.ts";
import { commitObject, encodeFiles, eventFromMessage, eventMessage, FORMAT_MARKER, parseCommit, parseTree, readTyped } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";

export const DOCS_PREFIX = `${REF_ROOT}docs/`;
const CONTENT = "content";

export function docRef(name: string): string {
  return DOCS_PREFIX + validateDocName(name);
}

export interface DocVersion {
  name: string;
  version: number;
  commit: string;
  blob: string;
  bytes: number;
  author: string;
  at: string;
}

export async function putDoc(store: Store, name: string, content: Buffer): Promise<DocVersion> {
  const ref = docRef(name);
  const problem = docContentProblem(content);
  if (problem) fail("invalid_input", `document ${name} ${problem}`);
  return store.casLoop(async (now) => {
    const tip = await store.readRef(ref);
    const versions = tip ? (await history(store, name, tip)).length : 0;
    const blob = store.writer.write("blob", content);
    const tree = store.writer.write("tree", encodeFiles(new Map([["format", store.writer.write("blob", FORMAT_MARKER)], [CONTENT, blob]])));
    const { agent, scope, worktree, branch } = store.actor;
    const event: HandoffEvent = { type: "doc_put", task: "", agent, at: now.toISOString(), scope, worktree, branch, doc: name, bytes: content.length };
    const commit = store.writer.write("commit", commitObject({ tree, parent: tip, author: agent, at: now, message: eventMessage(event) }));
    const v: DocVersion = { name, version: versions + 1, commit, blob, bytes: content.length, author: agent, at: event.at };
    return { updates: [{ ref, new: commit, old: tip }], result: v };
  });
}

/** Every version of a document, oldest first. */
async function history(store: Store, name: string, tip: string): Promise<DocVersion[]> {
  const ref = docRef(name);
  const out: Omit<DocVersion, "version">[] = [];
  for (let oid: string | undefined = tip; oid; ) {
    const commit = parseCommit(await readTyped(store.reader, oid, "commit", ref));
    const blob = parseTree(await readTyped(store.reader, commit.tree, "tree", ref), store.oidBytes, ref).get(CONTENT);
    if (!blob) fail("corrupt_state", `${ref} is corrupt: version ${oid} has no ${CONTENT}`, { ref });
    const event = eventFromMessage(commit.message);
    const bytes = (await readTyped(store.reader, blob, "blob", ref)).length;
    out.push({ name, commit: oid, blob, bytes, author: event?.agent ?? "?", at: event?.at ?? "" });
    oid = commit.parents[0];
  }
  return out.reverse().map((v, i) => ({ ...v, version: i + 1 }));
}

export async function docLog(store: Store, name: string, opts: { patch?: boolean } = {}): Promise<(DocVersion & { patch?: string })[]> {
  const tip = await store.readRef(docRef(name));
  if (!tip) fail("not_found", `no document ${name}`, { doc: name }, [{ action: "fix_input", detail: "list documents: git handoff doc list" }]);
  const versions = await history(store, name, tip);
  if (!opts.patch) return versions.reverse();
  const empty = store.writer.write("blob", "");
  const withPatch = [];
  for (let i = 0; i < versions.length; i++) {
    withPatch.push({ ...versions[i]!, patch: await blobDiff(store.storeCwd, i ? versions[i - 1]!.blob : empty, versions[i]!.blob, name) });
  }
  return withPatch.reverse();
}

/** A document's text: the newest version, or version `n` (1 is the first). */
export async function getDoc(store: Store, name: string, version?: number): Promise<DocVersion & { content: Buffer }> {
  const tip = await store.readRef(docRef(name));
  if (!tip) fail("not_found", `no document ${name}`, { doc: name }, [{ action: "fix_input", detail: "list documents: git handoff doc list" }]);
  const versions = await history(store, name, tip);
  const v = version === undefined ? versions.at(-1)! : versions[version - 1];
  if (!v) fail("not_found", `document ${name} has ${versions.length} version${versions.length === 1 ? "" : "s"}; there is no version ${version}`, { doc: name });
  return { ...v, content: await readTyped(store.reader, v.blob, "blob", docRef(name)) };
}

/** Every document's newest version; a damaged ref is named in `problems`, not a failure of the list (as memories are). */
export async function listDocs(store: Store): Promise<{ docs: (DocVersion & { versions: number })[]; problems: string[] }> {
  const docs = [];
  const problems: string[] = [];
  for (const { name: ref, oid } of await store.listRefs(DOCS_PREFIX)) {
    try {
      const versions = await history(store, ref.slice(DOCS_PREFIX.length), oid);
      docs.push({ ...versions.at(-1)!, versions: versions.length });
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      problems.push(e.message);
    }
  }
  return { docs, problems };
}
