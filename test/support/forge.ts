// Writing refs/handoff/* by hand with git plumbing, as a hostile clone (or a careless script) can:
// records the CLI would never write, authors it would never use, histories it would never make.
import { spawnSync } from "node:child_process";
import { cleanEnv, gitOut } from "./repo.ts";

export const FORMAT = "git-handoff 1\n";

function gitOutInput(repo: string, args: string[], input: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync("git", args, { cwd: repo, input, encoding: "utf8", env: cleanEnv(env), maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Writes a blob holding `text` and returns its id. */
export function blob(repo: string, text: string): string {
  return gitOutInput(repo, ["hash-object", "-w", "--stdin"], text);
}

/** A flat tree of `name -> text` files (or `name -> {tree}` for a sub-tree id). */
export function tree(repo: string, files: Record<string, string | { tree: string }>): string {
  const lines = Object.entries(files).map(([name, v]) => (typeof v === "string" ? `100644 blob ${blob(repo, v)}\t${name}` : `040000 tree ${v.tree}\t${name}`));
  return gitOutInput(repo, ["mktree"], lines.join("\n") + "\n");
}

export interface CommitOptions {
  tree: string;
  parent?: string | null;
  author?: string;
  message: string;
  /** Seconds since the epoch for author and committer. */
  time?: number;
}

export function commit(repo: string, o: CommitOptions): string {
  const who = o.author ?? "attacker";
  const date = `${o.time ?? Math.floor(Date.now() / 1000)} +0000`;
  return gitOutInput(repo, ["commit-tree", o.tree, ...(o.parent ? ["-p", o.parent] : []), "-F", "-"], o.message, {
    GIT_AUTHOR_NAME: who,
    GIT_AUTHOR_EMAIL: "git-handoff@localhost",
    GIT_COMMITTER_NAME: who,
    GIT_COMMITTER_EMAIL: "git-handoff@localhost",
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  });
}

/** The event message git-handoff writes: a summary line, a blank line, the event as JSON. */
export function eventMessage(event: Record<string, unknown>): string {
  return `${String(event.type)} ${String(event.task ?? "")}\n\n${JSON.stringify(event, null, 2)}\n`;
}

/** A record commit: the record as `file` next to the format marker, with an event message. */
export function recordCommit(repo: string, file: string, record: unknown, o: { parent?: string | null; author?: string; event?: Record<string, unknown>; message?: string; format?: string }): string {
  const t = tree(repo, { format: o.format ?? FORMAT, [file]: JSON.stringify(record, null, 2) + "\n" });
  return commit(repo, { tree: t, parent: o.parent ?? null, author: o.author ?? "attacker", message: o.message ?? eventMessage(o.event ?? { type: "updated", agent: o.author ?? "attacker", at: new Date().toISOString() }) });
}

export function setRef(repo: string, ref: string, oid: string): void {
  gitOut(repo, "update-ref", ref, oid);
}

/** The JSON record at `<ref>:<file>`. */
export function readRecordAt(repo: string, ref: string, file = "task.json"): any {
  return JSON.parse(gitOut(repo, "show", `${ref}:${file}`));
}

/** Rewrites the record at the tip of `ref` with `change` applied, as one more commit on it. */
export function amendRecord(repo: string, ref: string, change: (r: any) => void, o: { author?: string; file?: string; message?: string } = {}): string {
  const file = o.file ?? "task.json";
  const record = readRecordAt(repo, ref, file);
  change(record);
  const parent = gitOut(repo, "rev-parse", ref);
  const oid = recordCommit(repo, file, record, { parent, ...(o.author ? { author: o.author } : {}), ...(o.message ? { message: o.message } : {}) });
  setRef(repo, ref, oid);
  return oid;
}
