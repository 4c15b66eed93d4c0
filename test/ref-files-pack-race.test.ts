// RefFiles lists refs while `git pack-refs` moves them from loose files into packed-refs (sync and
// the views pack refs while other processes read): every ref is listed every time, in one file or
// the other, never in neither.
import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RefFiles } from "../src/git/ref-files.ts";
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const BATCH = 100;

test("refs listed while another process packs new loose refs: a listing never loses a ref an earlier one had", async () => {
  const repo = tempRepo();
  const head = gitOut(repo, "rev-parse", "HEAD");
  const prefix = "refs/handoff/tasks/";
  // Another process: create a batch of new refs (loose files), pack them all into packed-refs
  // (which deletes the loose files), again, for as long as the reader reads. No ref is deleted.
  let running = true;
  const packer = (async () => {
    let rounds = 0;
    while (running) {
      const names = Array.from({ length: BATCH }, (_, i) => `${prefix}r${rounds}-${i}`);
      await spawnGit(repo, ["update-ref", "--stdin"], names.map((n) => `create ${n} ${head}`).join("\n") + "\n");
      await spawnGit(repo, ["pack-refs", "--all"]);
      rounds++;
    }
    return rounds;
  })();
  const refs = new RefFiles(`${repo}/.git`);
  let lists = 0;
  let seen = 0;
  const deadline = Date.now() + 4000;
  try {
    while (Date.now() < deadline) {
      const got = refs.list(prefix).length;
      assert.ok(got >= seen, `listing ${lists}: ${got} refs, an earlier listing had ${seen}`);
      seen = got;
      lists++;
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    running = false;
    await packer.catch(() => 0); // never leave it writing into a folder the cleanup removes
  }
  const rounds = await packer;
  assert.ok(rounds >= 3, `the packer ran ${rounds} rounds`);
  assert.ok(lists >= 50, `${lists} listings`);
  assert.ok(seen >= BATCH * (rounds - 1), `${seen} refs seen of ${BATCH * rounds}`);
});

function spawnGit(cwd: string, args: string[], input?: string): Promise<void> {
  return new Promise((res, rej) => {
    const child = spawn("git", args, { cwd, env: cleanEnv(), stdio: [input === undefined ? "ignore" : "pipe", "ignore", "pipe"] });
    let err = "";
    child.stderr!.on("data", (b) => (err += b));
    child.on("close", (code) => (code === 0 ? res() : rej(new Error(`git ${args.join(" ")}: ${err}`))));
    if (input !== undefined) child.stdin!.end(input);
  });
}

test.run();
