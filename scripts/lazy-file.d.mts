// Types of lazy-file.mjs, which the build runs with plain node (no TypeScript there).
export function besideFile(
  parts: { top: string; groups: { kind: string; body: string }[]; tail: string },
  beside: string,
): Promise<{ main: string; side: string; read: string[] }>;
