// The tests' own process runner (test/support/repo.ts cliAsync): a child that exits without reading
// its input closes the pipe, and the write of that input then fails with EPIPE. That is the
// child's outcome, reported by its exit status; it once killed the whole test process instead (an
// unhandled 'error' on the stdin socket), taking every other file sharing that process with it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cliAsync, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("cliAsync: a child that answers without reading a large input reports its exit status, and the test process lives on", async () => {
  const repo = tempRepo();
  // `--version` is answered by the dispatcher without reading stdin; 4 MB is far past a pipe's buffer.
  for (let i = 0; i < 3; i++) {
    const r = await cliAsync(["--version"], { cwd: repo, agent: "a1", input: "x".repeat(4 << 20) });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /git-handoff/);
  }
});

test.run();
