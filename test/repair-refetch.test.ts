// doctor --repair fetches a broken ref's remote copy again, whole; where fetches from the remote
// are this process's (by path, git://, smart HTTP) it does so in process, under the same bounds as
// any fetch, never `git fetch --refetch` (git's, unbounded: docs/security.md). A damaged loose
// object is moved aside into .git/handoff/damaged-objects/ first: this process reads loose objects
// before packs, so it would hide the good copy fetched. A remote whose copy passes a bound has it
// refused, nothing of it written, and the ref stays removed, saying why.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemp, cli, gitOut, sh, tempDir } from "./support/repo.ts";
import { cloneOf, largestObjectFile, servedThreeWays, type GitServer } from "./support/servers.ts";
import { PACK_LIMITS } from "../src/git/pack-read.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

/** The git commands a run started, from its GIT_TRACE file. */
function gitRuns(trace: string): string[] {
  if (!existsSync(trace)) return [];
  return [...readFileSync(trace, "utf8").matchAll(/trace: built-in: (git [^\n]*)/g)].map((m) => m[1]!);
}

const loose = (repo: string, oid: string) => join(repo, ".git/objects", oid.slice(0, 2), oid.slice(2));

test("a damaged loose commit hiding the remote's good copy: doctor --repair fetches it again in process, moves the damaged file aside, the task reads again", async () => {
  const { bare, lead, urls } = await servedThreeWays(servers);
  for (const [kind, url] of urls) {
    const id = `fix-${kind}`;
    assert.is(cli(["task", "add", `fix ${kind}`, "--id", id, "--push"], { cwd: lead, agent: "lead" }).code, 0);
    const b = cloneOf(url);
    assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0, kind);
    const commit = gitOut(b, "rev-parse", `refs/handoff/tasks/${id}`);
    // Damaged on disk: the loose file holds bytes that are not an object (a new file: a clone by
    // path may share the remote's by a hard link).
    rmSync(loose(b, commit));
    writeFileSync(loose(b, commit), "not zlib at all");
    assert.is.not(cli(["task", "show", id], { cwd: b }).code, 0, `${kind}: the damage shows`);

    const trace = join(tempDir(), "trace");
    const fixed = cli(["doctor", "--repair", "--json"], { cwd: b, env: { GIT_TRACE: trace } });
    const objects = fixed.json.checks.find((c: { name: string }) => c.name === "objects");
    assert.is(objects.status, "ok", `${kind}: ${objects.detail}`);
    assert.match(objects.detail, /2 restored, 0 removed/, `${kind}: ${objects.detail}`);
    assert.match(objects.detail, /1 damaged loose object\(s\) moved aside into .*\.git\/handoff\/damaged-objects\//, `${kind}: ${objects.detail}`);
    assert.is(gitOut(b, "rev-parse", `refs/handoff/tasks/${id}`), gitOut(bare, "rev-parse", `refs/handoff/tasks/${id}`), kind);
    // Read by this process (loose objects first) and by git alike.
    assert.is(cli(["task", "show", id], { cwd: b }).code, 0, kind);
    assert.is(gitOut(b, "cat-file", "-t", commit), "commit");
    assert.equal(readdirSync(join(b, ".git/handoff/damaged-objects")).map((f) => f.slice(0, 40)), [commit], kind);
    assert.not.ok(gitRuns(trace).some((r) => r.startsWith("git fetch")), `${kind}: in process, not git fetch --refetch: ${gitRuns(trace).join("\n")}`);
  }
});

test("a remote copy past the bounds during doctor --repair: refused naming the bound, nothing of it written, the ref removed and saying why", async () => {
  const { bare, urls } = await servedThreeWays(servers);
  const clones = urls.map(([kind, url]) => [kind, cloneOf(url)] as const);
  // The remote's refs/handoff/results/x: a commit whose tree holds a blob past PACK_LIMITS.objectBytes.
  const size = PACK_LIMITS.objectBytes + 1024;
  const blob = sh("sh", ["-c", `head -c ${size} /dev/zero | git hash-object -w --stdin`], bare).trim();
  const tree = sh("sh", ["-c", `printf '100644 blob ${blob}\\tbig\\n' | git mktree`], bare).trim();
  gitOut(bare, "update-ref", "refs/handoff/results/x", gitOut(bare, "commit-tree", tree, "-m", "past the bound"));
  for (const [kind, b] of clones) {
    // Here the same ref points at a commit a prune took.
    const gone = gitOut(b, "commit-tree", `${gitOut(b, "rev-parse", "HEAD")}^{tree}`, "-m", "pruned");
    gitOut(b, "update-ref", "refs/handoff/results/x", gone);
    rmSync(loose(b, gone));
    const trace = join(tempDir(), "trace");
    const fixed = cli(["doctor", "--repair", "--json"], { cwd: b, env: { GIT_TRACE: trace } });
    const objects = fixed.json.checks.find((c: { name: string }) => c.name === "objects");
    assert.match(objects.detail, /0 restored, 1 removed/, `${kind}: ${objects.detail}`);
    assert.match(objects.detail, new RegExp(`the remote's copy of refs/handoff/results/x was refused: .*sent an object of ${size} bytes, past the bound of ${PACK_LIMITS.objectBytes} on one object: the fetch is refused, nothing of it written`), kind);
    assert.match(gitOut(b, "log", "-1", "--format=%B", "refs/handoff-local/repair-log"), /the remote's copy was refused: .*past the bound/, kind);
    assert.is(sh("git", ["for-each-ref", "refs/handoff/results/", "refs/handoff-remotes/"], b), "", kind);
    assert.is(sh("sh", ["-c", `git cat-file -e ${blob} 2>/dev/null || echo absent`], b).trim(), "absent", kind);
    assert.ok(largestObjectFile(b) < 1024 * 1024, `${kind}: nothing of its size on disk (${largestObjectFile(b)} bytes)`);
    assert.not.ok(gitRuns(trace).some((r) => r.startsWith("git fetch")), `${kind}: never handed to git fetch: ${gitRuns(trace).join("\n")}`);
  }
});

test.run();
