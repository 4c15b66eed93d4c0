// A clone that asks git to check what it fetches (`fetch.fsckObjects`, else `transfer.fsckObjects`)
// has the objects of a fetch made in process (by path, over git://, over HTTP) checked by git as
// `git fetch` would check them (`index-pack`/`unpack-objects --strict`): a `.gitmodules` whose url
// is an option (git's gitmodulesUrl, the check behind CVE-2018-17456) under refs/handoff/results/x
// is refused and kept back, the rest synced; without the setting the same ref arrives.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, sh, tempRepo } from "./support/repo.ts";
import { cloneOf, servedThreeWays, serveRoot, type GitServer } from "./support/servers.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

/** Makes `refs/handoff/results/x` in `bare` a commit whose tree holds a `.gitmodules` git's fsck refuses. */
function plantBadGitmodules(bare: string, name = "x"): string {
  const text = '[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/handoff-fsck-pwned\n';
  const blob = sh("sh", ["-c", `printf '%s' '${text}' | git hash-object -w --stdin`], bare).trim();
  const tree = sh("sh", ["-c", `printf '100644 blob ${blob}\\t.gitmodules\\n' | git mktree`], bare).trim();
  const commit = gitOut(bare, "commit-tree", tree, "-m", `a result ${name}`);
  gitOut(bare, "update-ref", `refs/handoff/results/${name}`, commit);
  return commit;
}

test("fetch.fsckObjects: a .gitmodules git's checks refuse is kept back by path, over git:// and over HTTP; without it, it arrives", async () => {
  const { bare, lead, urls } = await servedThreeWays(servers);
  const checked = urls.map(([kind, url]) => [kind, cloneOf(url)] as const);
  const trusting = cloneOf(bare);
  for (const [, b] of checked) gitOut(b, "config", "fetch.fsckObjects", "true");
  const commit = plantBadGitmodules(bare);
  for (const [kind, b] of checked) {
    assert.is(cli(["task", "add", `ship ${kind}`, "--id", `ship-${kind}`, "--push"], { cwd: lead, agent: "lead" }).code, 0);
    const s = cli(["sync", "--json"], { cwd: b, agent: "bob" });
    assert.is(s.code, 3, `${kind}: ${s.stderr}`);
    assert.equal(s.json.quarantined.map((q: { ref: string }) => q.ref), ["refs/handoff/results/x"], kind);
    assert.match(s.json.quarantined[0].reason, /fsckObjects/, `${kind}: ${s.json.quarantined[0].reason}`);
    assert.match(s.json.quarantined[0].reason, /gitmodulesUrl|disallowed submodule url/i, `${kind}: ${s.json.quarantined[0].reason}`);
    assert.is(gitOut(b, "rev-parse", `refs/handoff/tasks/ship-${kind}`), gitOut(bare, "rev-parse", `refs/handoff/tasks/ship-${kind}`), `${kind}: the rest arrived`);
    assert.is(sh("git", ["for-each-ref", "refs/handoff-remotes/origin/results/"], b), "", `${kind}: no tracking ref of it`);
  }
  // fetch.fsckObjects false wins over transfer.fsckObjects: the objects arrive, and the ref is
  // judged by receive's own rules (the planted commit is no git-handoff record: kept back for that).
  gitOut(trusting, "config", "transfer.fsckObjects", "true");
  gitOut(trusting, "config", "fetch.fsckObjects", "false");
  const s = cli(["sync", "--json"], { cwd: trusting, agent: "carol" });
  assert.equal(s.json.quarantined.map((q: { ref: string; oid: string }) => [q.ref, q.oid]), [["refs/handoff/results/x", commit]]);
  assert.match(s.json.quarantined[0].reason, /has no git-handoff format marker/);
  assert.is(sh("sh", ["-c", `git cat-file -t ${commit}`], trusting).trim(), "commit", "fetched: only receive's rules kept it back");
  // transfer.fsckObjects alone counts too.
  const strictByTransfer = cloneOf(bare);
  gitOut(strictByTransfer, "config", "transfer.fsckObjects", "true");
  const t = cli(["sync", "--json"], { cwd: strictByTransfer, agent: "dan" });
  assert.match(t.json.quarantined[0].reason, /gitmodulesUrl|disallowed submodule url/i);
});

test("fetch.fsckObjects: three refs git's checks refuse and nothing else new are kept back as such, not taken for a remote out of reach", () => {
  const root = serveRoot();
  const bare = root.bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const b = cloneOf(bare);
  gitOut(b, "config", "fetch.fsckObjects", "true");
  for (const name of ["r1", "r2", "r3"]) plantBadGitmodules(bare, name);
  const s = cli(["sync", "--json"], { cwd: b, agent: "bob" });
  assert.is(s.code, 3, s.stderr);
  assert.equal(s.json.quarantined.map((q: { ref: string }) => q.ref).sort(), ["refs/handoff/results/r1", "refs/handoff/results/r2", "refs/handoff/results/r3"]);
  for (const q of s.json.quarantined) assert.match(q.reason, /fsckObjects/);
});

test.run();
