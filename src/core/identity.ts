import * as z from "zod/mini";
import { lazySchema } from "./schema-helpers.ts";

/**
 * Where an agent works. `primary` is the main worktree, `worktree` a linked one, `ephemeral` a
 * detached HEAD or a worktree under the system temp folder (likely gone after the session).
 */
export const AgentScope = lazySchema(() => z.enum(["primary", "worktree", "ephemeral"]));
export type AgentScope = z.infer<typeof AgentScope>;

/** Who is acting and from where; recorded with every event and claim. */
export const Actor = lazySchema(() =>
  z.object({
    agent: z.string(),
    worktree: z.nullable(z.string()),
    branch: z.nullable(z.string()),
    scope: AgentScope,
  }),
);
export type Actor = z.infer<typeof Actor>;

export function deriveScope(opts: { isLinkedWorktree: boolean; detached: boolean; underTempDir: boolean }): AgentScope {
  if (opts.detached || opts.underTempDir) return "ephemeral";
  return opts.isLinkedWorktree ? "worktree" : "primary";
}
