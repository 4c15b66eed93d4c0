// Which build of git-handoff this is: the package version and, built from a git checkout, the
// commit and whether the work tree differed from it (scripts/build-identity.mjs). Clones running
// different builds behave differently (an older one holds back records a newer one writes), so
// `--version`, the MCP server and every agent declaration say which. Constants put in by the
// build: no git call or file read at run time, and nothing imported (the dispatcher answers
// `--version` with this module alone). Run from source: version "dev", no commit.
declare const PACKAGE_VERSION: string;
declare const BUILD_COMMIT: string | null;
declare const BUILD_DIRTY: boolean;

/** A build's identity, as an agent declaration records it (the schema is AgentRecord's `build`). */
export interface BuildIdentity {
  version: string;
  /** The commit built from (12 hex digits), or null when not built from a git checkout. */
  commit: string | null;
  /** Tracked files differed from that commit. */
  dirty: boolean;
}

export const THIS_BUILD: BuildIdentity =
  typeof PACKAGE_VERSION === "string"
    ? { version: PACKAGE_VERSION, commit: typeof BUILD_COMMIT === "string" ? BUILD_COMMIT : null, dirty: typeof BUILD_DIRTY === "boolean" && BUILD_DIRTY }
    : { version: "dev", commit: null, dirty: false };

/** `0.1.0 (3e7ee1a4c2d1)`, `0.1.0 (3e7ee1a4c2d1-dirty)`, or `0.1.0` without a commit. */
export function buildLabel(b: BuildIdentity): string {
  return b.commit ? `${b.version} (${b.commit}${b.dirty ? "-dirty" : ""})` : b.version;
}

/** A build as `agents` and doctor name it; null: a declaration from before builds were recorded. */
export function buildText(b: BuildIdentity | null): string {
  return b ? buildLabel(b) : "not recorded (an older build)";
}

/** As a semantic version with build metadata (`0.1.0+3e7ee1a4c2d1`), for clients that parse one (MCP serverInfo). */
export function buildSemver(b: BuildIdentity): string {
  return b.commit ? `${b.version}+${b.commit}${b.dirty ? "-dirty" : ""}` : b.version;
}

export function sameBuild(a: BuildIdentity, b: BuildIdentity): boolean {
  return a.version === b.version && a.commit === b.commit && a.dirty === b.dirty;
}
