// A lock's owner record carries its process's start time (owned-lock.ts processStart), read from
// /proc/<pid>/stat with one read into a buffer: field 22, counted after the command name, which
// may itself hold spaces and parentheses.
import { spawn } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { processStart } from "../src/git/owned-lock.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

const linux = process.platform === "linux";
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
};

test("the start time of this process and of a child whose name holds spaces and a parenthesis", async () => {
  if (!linux) return;
  assert.is(processStart(process.pid), startOf(process.pid));
  assert.match(processStart(process.pid)!, /^\d+$/);
  const sleeper = join(tempDir(), "a (b) c");
  copyFileSync("/bin/sleep", sleeper);
  const child = spawn(sleeper, ["5"], { stdio: "ignore" });
  try {
    await new Promise((r) => setTimeout(r, 100));
    assert.match(readFileSync(`/proc/${child.pid}/stat`, "latin1"), /\(a \(b\) c\)/);
    assert.is(processStart(child.pid!), startOf(child.pid!));
  } finally {
    child.kill();
  }
});

test("no start time for a process that is not there", () => {
  assert.is(processStart(2 ** 22 + 12345), null);
});

test.run();
