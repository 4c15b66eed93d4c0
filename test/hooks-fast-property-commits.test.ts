// The sh fast path as the git pre-commit hook against the full hook, on random lease sets and
// random staged files: it lets a commit through only where the full hook says nothing, and
// refuses one with the full hook's words (support: fast-property.ts; agent payloads are in
// hooks-fast-property-edits.test.ts). The second repository has a sync remote: others' leases
// stand for the takeover grace past their expiry there.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LeaseSet } from "../src/core/lease.ts";
import { preCommit } from "../src/hooks/git-hooks.ts";
import { refreshFastCache } from "../src/hooks/fast-cache.ts";
import { neutralise } from "../src/present/untrusted.ts";
import { mutateLeases } from "../src/store/lease-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { graceLeases, isolatedFastHook, randomLeases, SEED } from "./support/fast-property.ts";
import { mulberry32 as rng } from "./support/rng.ts";

test.after(cleanupTemp);

test("pre-commit: the fast path lets a commit through only where the full hook says nothing, and refuses one with its words", async () => {
  const r = rng(SEED + 1);
  const { script, bin } = isolatedFastHook("echo 'FULL HOOK'");
  let fast = 0;
  let refused = 0;
  let cases = 0;
  const now = new Date().toISOString();
  process.env.HANDOFF_NOW = now;
  for (let s = 0; s < 3; s++) {
    const repo = tempRepo();
    if (s === 1) {
      const bare = tempDir();
      gitOut(bare, "init", "-q", "--bare");
      gitOut(repo, "remote", "add", "origin", bare);
    }
    const store = await openSyncedStore({ cwd: repo, agent: "bob" });
    const record: LeaseSet = { leases: randomLeases(r, store.now().getTime()) };
    // From a generator of their own: the other draws stay as they were.
    if (s === 1) record.leases.push(...graceLeases(rng(SEED + 100), store.now().getTime()));
    await mutateLeases(store, (_s, ctx) => ({ ok: true, record, steps: [{ event: { type: "leased", task: "", agent: "bob", at: ctx.now.toISOString(), scope: "primary", worktree: null, branch: null, paths: ["(property test)"] }, record }] }));
    await refreshFastCache(store, { HANDOFF_AGENT: "bob" });
    for (let i = 0; i < 20; i++) {
      cases++;
      const files = Array.from({ length: 1 + r.int(3) }, () => r.pick(["src/a.ts", "src/api/users.ts", "lib/x.gen.ts", "docs/guide.md", "pkg1/deep/x.gen.ts", "free.txt", "lib/deep/b.md", "src/c.ts", "a.ts", "x.md", "src/*.ts", "name with space.ts", "\u00e9.md"]));
      for (const f of files) {
        mkdirSync(join(repo, f, ".."), { recursive: true });
        writeFileSync(join(repo, f), `${i}\n`);
      }
      gitOut(repo, "add", "-A");
      const env = cleanEnv({ HANDOFF_AGENT: "bob", PATH: `${bin}:${process.env.PATH}`, HANDOFF_NOW: now, HANDOFF_FAST_HOOK_CLOCK: "1" });
      const got = spawnSync(script, ["pre-commit"], { cwd: repo, env, encoding: "utf8" });
      if (got.stdout !== "FULL HOOK\n") {
        fast++;
        const want = await preCommit(store, repo);
        const where = `seed ${SEED + 1}, repo ${s}, commit ${i}: ${files.join(", ")}`;
        assert.is(got.stdout, "", where);
        if (got.status === 1) {
          // Refused: the words hook-main.ts writes to stderr for a deny, as a process writes them
          // (a lone surrogate in a reason is written as U+FFFD).
          refused++;
          assert.is(want.verdict, "deny", where);
          const words = neutralise(`${want.text}\n`) + "git-handoff: commit refused: staged files are inside another agent's exclusive lease (see above)\n";
          assert.is(got.stderr, Buffer.from(words, "utf8").toString("utf8"), where);
        } else {
          assert.is(got.status, 0, where);
          assert.is(`${want.verdict} ${want.text}`, "ok ", where);
        }
      }
      gitOut(repo, "commit", "-qm", `c${i}`);
      // The branch moved (no policy is committed here): the full hook's next run would recompile.
      await refreshFastCache(store, { HANDOFF_AGENT: "bob" });
    }
    store.close();
  }
  delete process.env.HANDOFF_NOW;
  process.stdout.write(`  ${cases} commits: the fast path answered ${fast} itself (${refused} refused)\n`);
  assert.ok(fast > cases / 10 && cases - fast > cases / 10 && refused > 0, `both ways taken (${fast} of ${cases}, ${refused} refused)`);
});

test.run();
