import { readHead } from "../git/head.ts";
import type { Store } from "./store.ts";

/** HEAD of the caller's worktree (null in a bare repository or on an unborn branch). */
export function worktreeHead(store: Store): Promise<string | null> {
  return store.repo.workTree ? readHead(store.repo.gitDir, (name) => store.readRef(name)) : Promise.resolve(null);
}
