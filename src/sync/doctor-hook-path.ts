// `doctor`'s check of the fast path's command: the agent hook configs and the git pre-commit hook
// that `init` writes run `git-handoff-hook <name>` (git-hooks/fast-hook.sh) by name. Without it on
// the PATH an agent's hook command fails (its edits go unchecked, and each agent reports the
// failure its own way); the git hook falls back to `git-handoff hook pre-commit`, only slower.
import { join } from "node:path";
import { configGet, gitPath } from "../git/config.ts";
import { AGENT_CONFIG_FILES, hooksDirFrom } from "../setup/hook-install.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";
import { read } from "./doctor-hooks.ts";
import { findOnPath, PUT_ON_PATH } from "../setup/on-path.ts";

const FAST = /git-handoff-hook\b/;

const uses = (path: string): boolean => FAST.test(read(path) ?? "");

/** One line when a hook here runs `git-handoff-hook`; none when nothing does. */
export async function hookPathChecks(store: Store, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  const root = store.repo.workTree;
  if (!root) return [];
  const agents = AGENT_CONFIG_FILES.filter((a) => uses(join(root, a.file)));
  const hooksDir = hooksDirFrom(root, await gitPath(store.cwd, "hooks"), await configGet(store.cwd, "core.hooksPath"));
  const commit = uses(join(hooksDir, "pre-commit"));
  if (!agents.length && !commit) return [];
  const users = [...agents.map((a) => a.file), ...(commit ? ["the git pre-commit hook"] : [])].join(", ");
  const found = findOnPath("git-handoff-hook", env);
  if (found) return [{ name: "fast-hook-path", status: "ok", detail: `${users} find git-handoff-hook at ${found}` }];
  const detail = agents.length
    ? `${users} run git-handoff-hook, which is not on the PATH: the agents' pre-edit hook commands fail and their edits are not checked`
    : "the git pre-commit hook runs git-handoff-hook, which is not on the PATH: commits are checked by the slower full hook";
  return [{ name: "fast-hook-path", status: "warn", detail, fix: PUT_ON_PATH }];
}
