// Codex edits arrive as an apply_patch envelope; the files it touches are named on header lines.
// A move names both sides, so a rename is checked on its old and its new path.
const HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$/;

export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const m = HEADER.exec(line);
    if (m && !out.includes(m[2]!)) out.push(m[2]!);
  }
  return out;
}
