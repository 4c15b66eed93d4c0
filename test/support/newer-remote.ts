// A sync remote holding refs "from a newer git-handoff": commits with a higher format marker, pushed
// with plain git as a future build would write them, which this build's sync then keeps back.
import { writeFileSync } from "node:fs";
import { commit, readRecordAt, recordCommit, setRef, tree } from "./forge.ts";
import { cli, gitOut, succeeded, tempRepo } from "./repo.ts";
import { cloneOf, serveRoot } from "./servers.ts";

/** What the note about a lease set held back as newer says (stale-leases.ts). */
export const NEWER_LEASES = /the lease set on origin is from a newer git-handoff/;

/** A remote and two clones, nothing of git-handoff's in them yet. */
function remoteAndClones(): { bare: string; a: string; b: string } {
  const bare = serveRoot().bare("project");
  const seed = tempRepo();
  writeFileSync(`${seed}/.gitignore`, ".claude/\n");
  gitOut(seed, "add", ".gitignore");
  gitOut(seed, "commit", "-q", "-m", "ignore");
  gitOut(seed, "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}

/** A remote and two clones; alice (in a) holds src/a.ts exclusively, and b has synced it. */
export function newerProject(): { bare: string; a: string; b: string } {
  const { bare, a, b } = remoteAndClones();
  succeeded(cli(["lease", "src/a.ts", "--exclusive"], { cwd: a, agent: "alice" }));
  succeeded(cli(["sync"], { cwd: b, agent: "bob" }));
  return { bare, a, b };
}

/** newerProject, alice's lease and bob's sync written in-process (seed.ts): for files that load src anyway or would start these processes often. */
export async function newerProjectSeeded(): Promise<{ bare: string; a: string; b: string }> {
  const { storeLease, storeSync } = await import("./seed.ts");
  const { bare, a, b } = remoteAndClones();
  await storeLease({ cwd: a, agent: "alice" }, ["src/a.ts"], { exclusive: true });
  await storeSync({ cwd: b, agent: "bob" });
  return { bare, a, b };
}

/** The lease set on the remote rewritten by "a future git-handoff": format 4, alice also holding src/b.ts exclusively. */
export function futureLeaseSet(bare: string): void {
  const tip = gitOut(bare, "rev-parse", "refs/handoff/leases");
  const set = readRecordAt(bare, "refs/handoff/leases", "leases.json");
  set.leases.push({ ...set.leases[0], pattern: "src/b.ts" });
  const t = tree(bare, { format: "git-handoff 4\n", "leases.json": JSON.stringify(set, null, 2) + "\n" });
  setRef(bare, "refs/handoff/leases", commit(bare, { tree: t, parent: tip, author: "alice", message: gitOut(bare, "log", "-1", "--format=%B", tip) + "\n" }));
}

/** Task `id` on the remote rewritten by "a future git-handoff": record format 3. */
export function futureTask(bare: string, id: string): void {
  const ref = `refs/handoff/tasks/${id}`;
  const tip = gitOut(bare, "rev-parse", ref);
  const record = readRecordAt(bare, ref);
  setRef(bare, ref, recordCommit(bare, "task.json", { ...record, objective: `${id} (v3)` }, { parent: tip, format: "git-handoff 3\n", author: "alice", message: gitOut(bare, "log", "-1", "--format=%B", tip) + "\n" }));
}
