// A value that starts with '-' is an option the user forgot to give a value before (`--agent-cmd
// --keep`), or one meant for git: text options refuse it rather than swallow it.

export function optionLike(s: string): boolean {
  return s.startsWith("-");
}
