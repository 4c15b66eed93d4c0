// The sh fast path against the full hook, on random input: lease sets (literal files and globs,
// exclusive and shared, live and expired, several agents, the caller's own leases with renewals
// due or not), policies (modes, auto_lease, a declared session) and payloads (every agent's edit
// and shell tools, relative and absolute paths, `..`, symlinks, paths outside the repository or
// inside .git, globs, odd encodings, JSON escapes, duplicate keys, broken JSON). Whenever the fast
// path answers itself, the full hook, run on the same input, must give exactly that answer and
// write nothing; its deny, warn and info answers must be the full hook's, byte for byte, at the same
// (scripted) time. Where the fast path hands over, the full hook answers: that is always right.
// The deny, warn and info answers have a file of their own (hooks-fast-answers.test.ts): each file
// is a few hundred short processes, and two run beside each other.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LeaseSet } from "../src/core/lease.ts";
import { preCommit } from "../src/hooks/git-hooks.ts";
import { exactTest, refreshFastCache, supersetTest } from "../src/hooks/fast-cache.ts";
import { matchesPath } from "../src/core/glob-overlap.ts";
import { neutralise } from "../src/present/untrusted.ts";
import { mutateLeases } from "../src/store/lease-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";
import { isolatedFastHook, PATTERNS, randomLeases, scenario, SCENARIOS, SEED } from "./support/fast-property.ts";
import { mulberry32 as rng } from "./support/rng.ts";

test.after(cleanupTemp);

test("the fast path answers only where the full hook gives the same answer and writes nothing", async () => {
  const { script, bin } = isolatedFastHook("cat >/dev/null\necho 'FULL HOOK'");
  const r = rng(SEED);
  let cases = 0;
  let fast = 0;
  let said = 0;
  let denied = 0;
  for (let i = 0; i < SCENARIOS; i++) {
    const s = await scenario(r, i, script, bin);
    cases += s.cases;
    fast += s.fast;
    said += s.said;
    denied += s.denied;
  }
  process.stdout.write(`  ${cases} payloads over ${SCENARIOS} lease sets: the fast path answered ${fast} (${said} of them deny, warn or info, ${denied} denied), handed ${cases - fast} to the full hook\n`);
  assert.ok(denied > cases / 200 && said - denied > cases / 400, `the fast path gives deny and warn answers too (${denied} denied, ${said - denied} other)`);
  assert.ok(fast > cases / 10, `the fast path answers a fair share (${fast} of ${cases}): the test must not pass by always handing over`);
  assert.ok(cases - fast > cases / 10, "and hands over a fair share too");
});

test("the cache's pattern tests: every match passes the superset test, the exact forms decide exactly", () => {
  const r = rng(SEED + 2);
  const pieces = ["src", "api", "lib", "deep", "a", "b.md", "x.gen.ts", "users.ts", "*", "**", "*.ts", "?.md", "[ab].ts", "{a,b}", "{src,lib}", "x*", "*x", "a?b", "!a", "+(a)", "@(x)", "(b)", "gen"];
  const pattern = () => Array.from({ length: 1 + r.int(4) }, () => r.pick(pieces)).join("/");
  let checked = 0;
  for (let i = 0; i < 400; i++) {
    const p = r.chance(0.7) ? pattern() : r.pick(PATTERNS);
    const [kind, a, b] = supersetTest(p);
    const exact = exactTest(p);
    for (let j = 0; j < 25; j++) {
      const path = Array.from({ length: 1 + r.int(4) }, () => r.pick(["src", "api", "lib", "deep", "a", "b", "b.md", "a.ts", "x.gen.ts", "users.ts", "x", "ax", "xa", "aab", "gen", "(b)", "!a"])).join("/");
      const hit = matchesPath(p, path);
      const passes = kind === "U" || (kind === "E" ? a === path : path.startsWith(a) && path.endsWith(b));
      if (hit) assert.ok(passes, `${path} matches ${p} but fails its superset test ${kind} ${a} ${b}`);
      if (exact) {
        const [k, ea, eb] = exact;
        const sure = k === "E" ? ea === path : k === "D" ? path.startsWith(ea) && path.length > ea.length : path.startsWith(ea) && (path.slice(ea.length) === eb || path.endsWith(`/${eb}`));
        assert.is(sure, hit, `exact test ${k} ${ea} ${eb} of ${p} on ${path}`);
      }
      checked++;
    }
  }
  process.stdout.write(`  ${checked} path and pattern pairs\n`);
});

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
    const store = await openSyncedStore({ cwd: repo, agent: "bob" });
    const record: LeaseSet = { leases: randomLeases(r, store.now().getTime()) };
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
          // Refused: the words hook-main.ts writes to stderr for a deny.
          refused++;
          assert.is(want.verdict, "deny", where);
          assert.is(got.stderr, neutralise(`${want.text}\n`) + "git-handoff: commit refused: staged files are inside another agent's exclusive lease (see above)\n", where);
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
