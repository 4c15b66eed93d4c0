// The sh fast path's own deny, warn and info answers against the full hook's, byte for byte, at
// the same (scripted) time: random payloads aimed at leases the fast path can name (support:
// fast-property.ts; the rest of the property tests are in hooks-fast-property-*.test.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp } from "./support/repo.ts";
import { isolatedFastHook, scenario, SCENARIOS, SEED, setFocus } from "./support/fast-property.ts";
import { mulberry32 as rng } from "./support/rng.ts";

test.after(cleanupTemp);

test("deny, warn and info answers: the fast path gives the full hook's, byte for byte", async () => {
  const { script, bin } = isolatedFastHook("cat >/dev/null\necho 'FULL HOOK'");
  const r = rng(SEED + 3);
  setFocus(true);
  let cases = 0;
  let said = 0;
  let denied = 0;
  let shell = 0;
  try {
    for (let i = 0; i < Math.max(1, SCENARIOS >> 1); i++) {
      const s = await scenario(r, i, script, bin);
      cases += s.cases;
      said += s.said;
      denied += s.denied;
      shell += s.shell;
    }
  } finally {
    setFocus(false);
  }
  process.stdout.write(`  ${cases} edits against leases the fast path can name: it answered ${said} deny, warn or info itself (${denied} denied, ${shell} for commands run through a shell tool)\n`);
  assert.ok(denied > cases / 40 && said - denied > cases / 20 && shell > 0, `answered by the fast path: ${denied} denied, ${said - denied} other, ${shell} through a shell tool`);
});

test.run();
