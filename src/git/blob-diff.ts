// A unified diff between two blobs (two versions of a shared document), as git computes it.
import { firstLine, git } from "./run.ts";

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export async function blobDiff(cwd: string, from: string, to: string, label: string): Promise<string> {
  // Only full object ids reach git here, never a value that could be read as an option.
  if (!OID.test(from) || !OID.test(to)) throw new Error(`not object ids: ${from} ${to}`);
  const r = await git(["diff", "--no-color", "--no-ext-diff", `--src-prefix=${label}@`, `--dst-prefix=${label}@`, from, to], { cwd });
  if (r.code !== 0) throw new Error(`git diff failed: ${firstLine(r.stderr)}`);
  return r.stdout;
}
