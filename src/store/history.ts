// Walking the first-parent history of one ref. Every entity's history is a line of commits (the
// archive's extra parents are the archived tasks), so ancestry is a walk, not a graph search.
import { parseCommit, readTyped, type ParsedCommit } from "./codec.ts";
import type { Store } from "./store.ts";

const WALK_LIMIT = 100_000;

export async function readCommit(store: Store, oid: string, ref: string): Promise<ParsedCommit> {
  return parseCommit(await readTyped(store.reader, oid, "commit", ref));
}

/** Commit ids from `tip` back to the root along first parents, newest first. */
export async function firstParentChain(store: Store, tip: string, ref: string): Promise<string[]> {
  const chain: string[] = [];
  let oid: string | undefined = tip;
  while (oid && chain.length < WALK_LIMIT) {
    chain.push(oid);
    oid = (await readCommit(store, oid, ref)).parents[0];
  }
  return chain;
}

/** Whether `ancestor` is `descendant` or lies on its first-parent line. */
export async function isAncestor(store: Store, ancestor: string, descendant: string, ref: string): Promise<boolean> {
  let oid: string | undefined = descendant;
  for (let n = 0; oid && n < WALK_LIMIT; n++) {
    if (oid === ancestor) return true;
    oid = (await readCommit(store, oid, ref)).parents[0];
  }
  return false;
}

/**
 * The commits on `local` that `remote` does not have, oldest first, and the last commit they
 * share (null when the two lines share nothing, e.g. a task created on both sides).
 */
export async function commitsSince(store: Store, remote: string, local: string, ref: string): Promise<{ base: string | null; commits: string[] }> {
  const onRemote = new Set(await firstParentChain(store, remote, ref));
  const commits: string[] = [];
  let oid: string | undefined = local;
  while (oid && !onRemote.has(oid)) {
    commits.push(oid);
    oid = (await readCommit(store, oid, ref)).parents[0];
  }
  return { base: oid ?? null, commits: commits.reverse() };
}
