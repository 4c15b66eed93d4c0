// Types of lazy-file.mjs, which the build runs with plain node (no TypeScript there).
export function besideFiles(
  parts: { top: string; groups: { kind: string; body: string }[]; tail: string },
  fileOf: (kind: string) => string,
): Promise<{ main: string; sides: { kind: string; file: string; text: string; read: string[] }[] }>;
