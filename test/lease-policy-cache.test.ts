// A long-running Store keeps the lease policy it built (lease-store.ts loadPolicy) while
// .gitattributes stays the same file: a marking added, changed or removed is seen at the next call.
import { rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isIgnored } from "../src/core/lease-policy.ts";
import { loadPolicy } from "../src/store/lease-store.ts";
import { openStore } from "../src/store/store.ts";
import { cleanupTemp, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("the policy follows .gitattributes as it comes, changes and goes; unchanged, the same policy", async () => {
  const repo = tempRepo();
  const store = await openStore({ cwd: repo, agent: "a", warm: true });
  try {
    const first = loadPolicy(store);
    assert.not.ok(isIgnored(first, "gen/out.js"));
    assert.is(loadPolicy(store), first, "nothing changed: the same policy, no file read");
    writeFileSync(`${repo}/.gitattributes`, "gen/** linguist-generated\n");
    assert.ok(isIgnored(loadPolicy(store), "gen/out.js"), "marking added");
    writeFileSync(`${repo}/.gitattributes`, "gen/** linguist-generated=false\n");
    assert.not.ok(isIgnored(loadPolicy(store), "gen/out.js"), "marking changed in place");
    writeFileSync(`${repo}/.gitattributes`, "gen/** handoff-ignore\n");
    assert.ok(isIgnored(loadPolicy(store), "gen/out.js"));
    rmSync(`${repo}/.gitattributes`);
    assert.not.ok(isIgnored(loadPolicy(store), "gen/out.js"), "file removed");
  } finally {
    store.close();
  }
});

test.run();
