// `git handoff completion bash|zsh|fish`: the script for each shell, rendered from the command
// definitions (completion-model.ts), so verbs, options and the values they take cannot drift
// from what the program accepts.
import type { Command } from "commander";
import { bashScript } from "./completion-bash.ts";
import { completionTree } from "./completion-model.ts";
import { fishScript } from "./completion-fish.ts";
import { zshScript } from "./completion-zsh.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export function completion(program: Command, shell: Shell): string {
  const root = completionTree(program);
  return shell === "bash" ? bashScript(root) : shell === "zsh" ? zshScript(root) : fishScript(root);
}
