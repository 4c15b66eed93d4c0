// `doctor`'s checks of what makes the checks run at all in this worktree: the git hooks (installed,
// executable, or the husky/lefthook lines where those manage hooks), `git-handoff` reachable from
// the PATH the hooks run with, and the agents' hook configs. Each problem names its fix.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { configWithScope, gitPath } from "../git/config.ts";
import { AGENT_CONFIG_FILES, GIT_HOOKS, hooksDirFrom, isHusky, lefthookFile, sharedHooksAdvice, sharedScope, type HookLayout } from "../setup/hook-install.ts";
import { findOnPath, isExecutableFile, PUT_ON_PATH } from "../setup/on-path.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";

const OURS = /git[- ]handoff[- ]hook/;

export function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}


export async function hookChecks(store: Store, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  const root = store.repo.workTree;
  if (!root) return [{ name: "git-hooks", status: "ok", detail: "bare repository: no worktree, no hooks to run" }];
  const set = await configWithScope(store.cwd, "core.hooksPath");
  const hooksPath = set?.value ?? null;
  const layout: HookLayout = { workTree: root, hooksPath, hooksPathScope: sharedScope(set?.scope), hooksDir: hooksDirFrom(root, await gitPath(store.cwd, "hooks"), hooksPath) };
  return [gitHooksCheck(layout), pathCheck(env), agentConfigCheck(root)];
}

function gitHooksCheck(layout: HookLayout): Check {
  const lefthook = lefthookFile(layout.workTree);
  if (lefthook) {
    const text = read(join(layout.workTree, lefthook)) ?? "";
    const missing = GIT_HOOKS.filter((h) => !new RegExp(`git-handoff hook ${h}`).test(text));
    return missing.length
      ? { name: "git-hooks", status: "warn", detail: `lefthook manages git hooks here and ${lefthook} does not run git-handoff for ${missing.join(", ")}`, fix: `add the lines git handoff init --dry-run prints to ${lefthook}` }
      : { name: "git-hooks", status: "ok", detail: `lefthook runs git-handoff for ${GIT_HOOKS.join(" and ")} (${lefthook})` };
  }
  if (isHusky(layout)) {
    const missing = GIT_HOOKS.filter((h) => !OURS.test(read(join(layout.workTree, ".husky", h)) ?? ""));
    return missing.length
      ? { name: "git-hooks", status: "warn", detail: `husky manages git hooks here and .husky/${missing.join(", .husky/")} does not run git-handoff`, fix: `add to .husky/${missing[0]}: git-handoff hook ${missing[0]}${missing[0] === "pre-push" ? ' "$@"' : ""}` }
      : { name: "git-hooks", status: "ok", detail: `husky runs git-handoff for ${GIT_HOOKS.join(" and ")}` };
  }
  const problems: string[] = [];
  let fix = layout.hooksPathScope ? sharedHooksAdvice(layout) : "git handoff init";
  for (const h of GIT_HOOKS) {
    const path = join(layout.hooksDir, h);
    const text = read(path);
    if (text === null) problems.push(`${h} is not installed in ${layout.hooksDir}`);
    else if (!OURS.test(text)) problems.push(`${path} does not run git-handoff`);
    else if (!isExecutableFile(path)) {
      problems.push(`${path} is not executable (git skips it)`);
      fix = `chmod +x ${path}`;
    }
  }
  return problems.length
    ? { name: "git-hooks", status: "warn", detail: `file leases are not checked at commit/push: ${problems.join("; ")}`, fix }
    : { name: "git-hooks", status: "ok", detail: `${GIT_HOOKS.join(" and ")} installed and executable in ${layout.hooksDir}` };
}

/** The hooks run `git-handoff` by name: it must be an executable on the PATH git passes them. */
function pathCheck(env: NodeJS.ProcessEnv): Check {
  const found = findOnPath("git-handoff", env);
  return found
    ? { name: "hook-path", status: "ok", detail: `the hooks find git-handoff at ${found}` }
    : { name: "hook-path", status: "warn", detail: "git-handoff is not on the PATH: the pre-push hook (and the pre-commit hook where git-handoff-hook is missing too) says \"not on PATH, file leases not checked\" and lets it through; the agents' session-start hooks fail", fix: PUT_ON_PATH };
}

function agentConfigCheck(root: string): Check {
  const present = AGENT_CONFIG_FILES.filter((a) => existsSync(join(root, a.file)));
  const ours = present.filter((a) => OURS.test(read(join(root, a.file)) ?? ""));
  const without = present.filter((a) => !ours.includes(a));
  if (!present.length) return { name: "agent-configs", status: "warn", detail: `no agent hook config here (${AGENT_CONFIG_FILES.map((a) => a.file).join(", ")}): agents' edits are not checked before they happen`, fix: "git handoff init" };
  if (without.length) return { name: "agent-configs", status: "warn", detail: `${without.map((a) => a.file).join(", ")} do not run git-handoff`, fix: "git handoff init" };
  return { name: "agent-configs", status: "ok", detail: `hooks configured for ${ours.map((a) => a.name).join(", ")}` };
}
