// Types of build-identity.mjs, which the build runs with plain node (no TypeScript there).
export function buildIdentity(root: string, version: string): { version: string; commit: string | null; dirty: boolean };
