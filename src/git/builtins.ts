// node:child_process loads net and stream code, ~4 ms of a cold start; the agent hook answers most
// edits from files alone and never spawns git. So modules that spawn load it on first use.
import type * as ChildProcess from "node:child_process";

type GetBuiltin = <T>(id: string) => T;

export function childProcess(): typeof ChildProcess {
  const get = (process as unknown as { getBuiltinModule?: GetBuiltin }).getBuiltinModule;
  // Node < 20.16 has no getBuiltinModule; bundles are CommonJS, where require exists.
  return get ? get<typeof ChildProcess>("node:child_process") : (require("node:child_process") as typeof ChildProcess);
}
