// A fetch of this process's (smart HTTP, a folder here, git://) whose answer passes a bound is
// refused, naming the bound, with nothing of it written and never handed to `git fetch` (which
// would write it all before anything judged it): a blob past the bound under
// refs/handoff/results/x by path, over a real `git daemon` and over `git http-backend` leaves the
// rest of the sync in and that ref kept back, not asked for again; an HTTP answer past 32 MB is
// refused the same way (a git:// one: test/stream-remote.test.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { cleanupTemp, cli, gitOut, sh, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, largestObjectFile, servedThreeWays, serveRoot, type GitServer } from "./support/servers.ts";
import { fetchOverHttp } from "../src/git/http-remote.ts";
import { MAX_ANSWER } from "../src/git/upload-pack-v2.ts";
import { PACK_LIMITS } from "../src/git/pack-read.ts";
import { openStore } from "../src/store/store.ts";

const servers: GitServer[] = [];
const plain: HttpServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of plain) s.close();
  cleanupTemp();
});

/** The git commands a run started, from its GIT_TRACE file. */
function gitRuns(trace: string): string[] {
  if (!existsSync(trace)) return [];
  return [...readFileSync(trace, "utf8").matchAll(/trace: built-in: (git [^\n]*)/g)].map((m) => m[1]!);
}

/** Makes `refs/handoff/results/x` in `bare` a commit whose tree holds a blob of zeros past PACK_LIMITS.objectBytes. */
function plantLargeBlob(bare: string): { blob: string; size: number } {
  const size = PACK_LIMITS.objectBytes + 1024;
  const blob = sh("sh", ["-c", `head -c ${size} /dev/zero | git hash-object -w --stdin`], bare).trim();
  const tree = sh("sh", ["-c", `printf '100644 blob ${blob}\\tbig\\n' | git mktree`], bare).trim();
  gitOut(bare, "update-ref", "refs/handoff/results/x", gitOut(bare, "commit-tree", tree, "-m", "past the bound"));
  return { blob, size };
}

test("a blob past the bound under refs/handoff/results/x: refused naming the bound, nothing of it on disk, the rest synced; by path, over git:// and over HTTP", async () => {
  const { bare, lead, urls } = await servedThreeWays(servers);
  // Cloned first: a clone by path copies the remote's object folder whole.
  const clones = urls.map(([kind, url]) => [kind, cloneOf(url)] as const);
  const { blob, size } = plantLargeBlob(bare);
  for (const [kind, b] of clones) {
    assert.is(cli(["task", "add", `ship ${kind}`, "--id", `ship-${kind}`, "--push"], { cwd: lead, agent: "lead" }).code, 0);
    const trace = join(tempDir(), "trace");
    const s = cli(["sync", "--json"], { cwd: b, agent: "bob", env: { GIT_TRACE: trace } });
    // Refused as a ref the remote could not send is: quarantined, exit 3, everything else synced.
    assert.is(s.code, 3, `${kind}: ${s.stderr}`);
    assert.equal(s.json.quarantined.map((q: { ref: string }) => q.ref), ["refs/handoff/results/x"], kind);
    assert.match(s.json.quarantined[0].reason, new RegExp(`sent an object of ${size} bytes, past the bound of ${PACK_LIMITS.objectBytes} on one object: the fetch is refused, nothing of it written`));
    assert.is(gitOut(b, "rev-parse", `refs/handoff/tasks/ship-${kind}`), gitOut(bare, "rev-parse", `refs/handoff/tasks/ship-${kind}`), `${kind}: the rest arrived`);
    assert.is(sh("git", ["for-each-ref", "refs/handoff/results/", "refs/handoff-remotes/origin/results/"], b), "", "no ref of it, tracking or local");
    assert.is(sh("sh", ["-c", `git cat-file -e ${blob} 2>/dev/null || echo absent`], b).trim(), "absent");
    assert.ok(largestObjectFile(b) < 1024 * 1024, `${kind}: nothing of its size on disk (${largestObjectFile(b)} bytes)`);
    assert.not.ok(gitRuns(trace).some((r) => r.startsWith("git fetch")), `${kind}: never handed to git fetch: ${gitRuns(trace).join("\n")}`);
    // Not asked for again: the next sync is clean of fetches of it, and says it is still refused.
    const again = cli(["sync"], { cwd: b, agent: "bob" });
    assert.is(again.code, 3);
    assert.match(again.stdout, /refs\/handoff\/results\/x: .*past the bound/);
  }
});

test("over smart HTTP, an answer past MAX_ANSWER is refused naming the bound, not handed to git", async () => {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/x-git-upload-pack-result" });
      const chunk = Buffer.alloc(1024 * 1024, 0x30);
      let sent = 0;
      const more = () => {
        while (sent < MAX_ANSWER + 4 * chunk.length && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end();
      };
      more();
    });
  });
  plain.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x.git`;
  gitOut(a, "config", "remote.origin.url", url);
  const store = await openStore({ cwd: a, agent: "tester" });
  try {
    const head = gitOut(a, "commit-tree", `${gitOut(a, "rev-parse", "HEAD")}^{tree}`, "-m", "x");
    const r = await fetchOverHttp(store.remoteSource, "origin", [head], [], 20_000);
    assert.equal(r, { ok: false, message: `${url} sent an answer of more than ${MAX_ANSWER} bytes, past the bound on one answer: the fetch is refused, nothing of it written`, timedOut: false, bound: true });
  } finally {
    store.close();
    server.closeAllConnections();
  }
});

test.run();
