// Bench fixture: many live file leases written straight into the lease ref (one commit), as the
// busy repository the lease-checking paths (hook, check_files) are measured against.
import type { Lease, LeaseSet } from "../../src/core/lease.ts";
import { mutateLeases } from "../../src/store/lease-store.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";

/** `agents` x `perAgent` leases: 7 files and the rest folder globs each, a fifth of the globs exclusive. */
export async function seedLeases(repo: string, agents: number, perAgent: number, opts: { under?: string } = {}): Promise<void> {
  // `under`: every pattern inside that one folder (a repository whose code is all under src/).
  const at = opts.under ? `${opts.under}/` : "";
  const store = await openStore({ cwd: repo, agent: "bench-setup" });
  const now = store.now();
  const leases: Lease[] = [];
  for (let a = 0; a < agents; a++) {
    for (let j = 0; j < perAgent; j++) {
      const glob = j >= 7;
      leases.push({
        pattern: glob ? `${at}pkg${a}/lib${j}/**` : `${at}pkg${a}/src/file${j}.ts`,
        agent: `agent-${a}`,
        task: `t-${a}`,
        exclusive: glob && a % 5 === 0,
        acquired_at: now.toISOString(),
        expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
        ttl_ms: 3_600_000,
        reason: null,
        worktree: `/work/agent-${a}`,
        branch: `agent-${a}`,
        scope: "worktree",
      });
    }
  }
  const record: LeaseSet = { leases: leases.sort((x, y) => x.pattern.localeCompare(y.pattern)) };
  const count = `(${(agents * perAgent).toLocaleString("en")} leases)`;
  await mutateLeases(store, (_set, ctx) => ({
    ok: true,
    record,
    steps: [{ event: { type: "leased", task: "", agent: "bench-setup", at: ctx.now.toISOString(), scope: "primary", worktree: null, branch: null, paths: [count] }, record }],
  }));
  store.close();
}

/** A Claude Code PreToolUse payload: an Edit of `file` (relative to `repo`), as the client sends it. */
export function editPayload(repo: string, file: string): string {
  return JSON.stringify({
    session_id: "bench",
    transcript_path: "/tmp/bench.jsonl",
    cwd: repo,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Edit",
    tool_input: { file_path: `${repo}/${file}`, old_string: "a", new_string: "b" },
    tool_use_id: "toolu_bench",
  });
}
