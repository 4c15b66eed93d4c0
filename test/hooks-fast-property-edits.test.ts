// The sh fast path against the full hook, on random agent payloads: lease sets (literal files and
// globs, exclusive and shared, live and expired, several agents, the caller's own leases with
// renewals due or not), policies (modes, auto_lease, a declared session) and payloads (every agent's
// edit and shell tools, relative and absolute paths, `..`, symlinks, paths outside the repository or
// inside .git, globs, odd encodings, JSON escapes, duplicate keys, broken JSON). Whenever the fast
// path answers itself, the full hook, run on the same input, must give exactly that answer and
// write nothing; its deny, warn and info answers must be the full hook's, byte for byte, at the same
// (scripted) time. Where the fast path hands over, the full hook answers: that is always right.
// Support: fast-property.ts. The deny, warn and info answers (hooks-fast-answers.test.ts), commits
// (hooks-fast-property-commits.test.ts) and the cache's pattern tests
// (hooks-fast-property-patterns.test.ts) have files of their own: each of the first three is a few
// hundred short processes, so they run beside each other and each stays within the per-file budget.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp } from "./support/repo.ts";
import { isolatedFastHook, scenario, SCENARIOS, SEED } from "./support/fast-property.ts";
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

test.run();
