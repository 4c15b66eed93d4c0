// What `git handoff --version` and `version` print: the build's identity (core/build-identity.ts).
import { buildLabel, THIS_BUILD } from "../core/build-identity.ts";

/** `git-handoff 0.1.0 (3e7ee1a4c2d1)`: the version, and the commit built from when known. */
export const VERSION_LINE = `git-handoff ${buildLabel(THIS_BUILD)}`;
