// What a worker killed outright leaves in the temporary directory: its task folders (the task, the
// sender's context and files, the worktree the command ran in) and its spare `handoff-next-*`
// worktree, each still registered with git, and a command that may still run (it has a process
// group of its own, so Ctrl-C can stop it whole; a SIGKILL of the worker does not reach it). Its
// lease expires and another worker runs the task again beside the leftover command.
//
// Each such folder records who made it (`owner`: the repository, the worker's pid and start time,
// then the command's once it runs). A worker starting on this machine, for folders of its own
// repository only, stops a command whose worker is gone (its whole group, only if that process is
// still the one recorded) and removes the folders of workers that are gone, with their worktrees.
// A folder without an owner file, or another repository's, is not ours to judge, and is left alone.
import { appendFileSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive, processStart } from "../git/process-alive.ts";
import { discoverRepo } from "../git/repo.ts";
import { removeWorktree } from "../git/worktree.ts";

const OWNER = "owner";
const FOLDER = /^handoff-.+-[A-Za-z0-9]{6}$/;

/** Records the calling worker, of the repository whose common git folder is `commonDir`, as the owner of `home`. */
export function markOwner(home: string, commonDir: string): void {
  writeFileSync(join(home, OWNER), `repo ${commonDir}\nworker ${process.pid} ${processStart(process.pid) ?? "-"}\n`);
}

/** Records the command running for `home`'s task (its process group leader). */
export function markCommand(home: string, pid: number | undefined): void {
  if (!pid) return;
  try {
    appendFileSync(join(home, OWNER), `command ${pid} ${processStart(pid) ?? "-"}\n`);
  } catch {
    /* the folder is gone already */
  }
}

interface Owner {
  repo: string | null;
  worker: { pid: number; start: string | null } | null;
  command: { pid: number; start: string | null } | null;
}

function readOwnerFile(home: string): Owner | null {
  let text: string;
  try {
    text = readFileSync(join(home, OWNER), "utf8");
  } catch {
    return null;
  }
  const out: Owner = { repo: null, worker: null, command: null };
  for (const line of text.split("\n")) {
    if (line.startsWith("repo ")) out.repo = line.slice(5);
    const m = /^(worker|command) (\d+) (\S+)$/.exec(line);
    if (m) out[m[1] as "worker" | "command"] = { pid: Number(m[2]), start: m[3] === "-" ? null : m[3]! };
  }
  return out.worker ? out : null;
}

/**
 * Whether `worktree` is a worktree of the repository whose common git folder is `commonDir`, as
 * the repository discovery every command uses reads it (a relative gitdir, a commondir file).
 */
function worktreeOf(worktree: string, commonDir: string): boolean {
  try {
    const repo = discoverRepo(worktree);
    return repo.commonDir === commonDir && repo.workTree === realpathSync(worktree);
  } catch {
    return false;
  }
}

/** Cleans up after workers of this machine that are gone; returns what it did, one line each. */
export async function sweepLeftovers(cwd: string, commonDir: string): Promise<string[]> {
  const done: string[] = [];
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((n) => FOLDER.test(n));
  } catch {
    return done;
  }
  for (const name of names) {
    const home = join(tmpdir(), name);
    const owner = readOwnerFile(home);
    if (!owner || owner.repo !== commonDir || processAlive(owner.worker!.pid, owner.worker!.start)) continue;
    const worktree = join(home, "worktree");
    const ours = existsSync(worktree) && worktreeOf(worktree, commonDir);
    if (existsSync(worktree) && !ours) continue; // not a worktree of ours after all: left alone
    if (owner.command && processAlive(owner.command.pid, owner.command.start)) {
      try {
        process.kill(-owner.command.pid, "SIGTERM");
        done.push(`stopped the command a stopped worker left running (process group ${owner.command.pid}, in ${home})`);
      } catch {
        /* gone meanwhile */
      }
      continue; // its folder goes at the next start, once the command has ended
    }
    if (ours) await removeWorktree(cwd, worktree).catch(() => {});
    rmSync(home, { recursive: true, force: true });
    done.push(`removed ${home}, left by a stopped worker`);
  }
  return done;
}
