// A remote is another machine's bytes: a server whose answer to a fetch is out of shape once its
// upload-pack took the request (not pkt-lines, a pack whose trailing checksum does not match) has
// that fetch refused, naming what was wrong, with nothing written and never handed to `git fetch`
// (which would write whatever the same server sent it, with no bound). Real servers (git
// http-backend, git daemon) behind a proxy in this test that spoils only the fetch's answer: the
// listing is the server's own. Bounds passed: test/fetch-bounds.test.ts.
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from "node:http";
import { connect, createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { join } from "node:path";
import { cleanupTemp, cli, cliAsync, gitOut, tempDir } from "./support/repo.ts";
import { cloneOf, servedThreeWays, type GitServer } from "./support/servers.ts";

const servers: GitServer[] = [];
const proxies: (HttpServer | NetServer)[] = [];
const sockets: Socket[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of sockets) s.destroy();
  for (const p of proxies) p.close();
  cleanupTemp();
});

/** The git commands a run started, from its GIT_TRACE file. */
function gitRuns(trace: string): string[] {
  if (!existsSync(trace)) return [];
  return [...readFileSync(trace, "utf8").matchAll(/trace: built-in: (git [^\n]*)/g)].map((m) => m[1]!);
}

/**
 * The objects of the remote `bare`'s task refs that `repo` holds and none of its own refs reach:
 * the answer's, had it been written (its own records share a blob or two with the remote's).
 */
function answerObjectsIn(bare: string, repo: string): string[] {
  const own = new Set(gitOut(repo, "rev-list", "--objects", "--all").split("\n").map((l) => l.slice(0, 40)));
  const ids = gitOut(bare, "rev-list", "--objects", "--glob=refs/handoff/tasks/", "--not", "main").split("\n").map((l) => l.slice(0, 40));
  return ids.filter((id) => id && !own.has(id) && spawnSync("git", ["cat-file", "-e", id], { cwd: repo }).status === 0);
}

type Spoil = (answer: Buffer) => Buffer;

/** The pack's last byte (its checksum's) changed: the answer ends with the pack's last pkt-line, then a flush. */
const badChecksum: Spoil = (answer) => {
  const out = Buffer.from(answer);
  out[out.length - 5] = out[out.length - 5]! ^ 0xff;
  return out;
};
const garbage: Spoil = () => Buffer.from("zzzz not pkt-lines \x00\x01");

/**
 * An HTTP proxy in front of a smart HTTP server: every request passed on, the answer to a v2
 * `fetch` spoiled. `log` gets "<method> <path> <command>" a request.
 */
async function spoilingHttp(upstream: string, spoil: Spoil, log: string[]): Promise<string> {
  const up = new URL(upstream);
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const command = /command=(\w[\w-]*)/.exec(body.toString("latin1"))?.[1] ?? "";
      log.push(`${req.method} ${req.url} ${command}`.trim());
      const headers = { ...req.headers, host: up.host };
      const fwd = httpRequest({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers }, (r) => {
        const got: Buffer[] = [];
        r.on("data", (c: Buffer) => got.push(c));
        r.on("end", () => {
          const answer = Buffer.concat(got);
          const out = command === "fetch" ? spoil(answer) : answer;
          const h = { ...r.headers };
          delete h["content-length"];
          delete h["transfer-encoding"];
          res.writeHead(r.statusCode ?? 500, { ...h, "content-length": String(out.length) });
          res.end(out);
        });
      });
      fwd.end(body);
    });
  });
  proxies.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${up.pathname}`;
}

/** A TCP proxy in front of a git daemon: each connection passed on, the answer to a v2 `fetch` spoiled. `log` gets the command of each. */
async function spoilingDaemon(upstream: string, spoil: Spoil, log: string[]): Promise<string> {
  const up = new URL(upstream);
  const server = createNetServer((client) => {
    sockets.push(client);
    const sent: Buffer[] = [];
    const got: Buffer[] = [];
    const daemon = connect(Number(up.port), up.hostname);
    sockets.push(daemon);
    client.on("data", (b: Buffer) => {
      sent.push(b);
      daemon.write(b);
    });
    daemon.on("data", (b: Buffer) => got.push(b));
    // The daemon closes once the session ends: then the whole answer, spoiled if it was a fetch's.
    daemon.on("end", () => {
      const command = /command=(\w[\w-]*)/.exec(Buffer.concat(sent).toString("latin1"))?.[1] ?? "";
      log.push(command);
      const answer = Buffer.concat(got);
      client.end(command === "fetch" ? spoil(answer) : answer);
    });
    for (const s of [client, daemon]) s.on("error", () => {});
  });
  proxies.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `git://127.0.0.1:${(server.address() as AddressInfo).port}${up.pathname}`;
}

test("a fetch answered out of shape over HTTP and git://: refused naming what was wrong, nothing written, the ref kept back, no git fetch", async () => {
  const { bare, lead, urls } = await servedThreeWays(servers);
  const cases = [
    ["http", "a pack out of shape \\(its trailing checksum does not match\\)", badChecksum],
    ["http", "what is not pkt-lines", garbage],
    ["daemon", "a pack out of shape \\(its trailing checksum does not match\\)", badChecksum],
  ] as const;
  for (const [i, [kind, said, spoil]] of cases.entries()) {
    const real = urls.find(([k]) => k === kind)![1];
    const log: string[] = [];
    const url = kind === "http" ? await spoilingHttp(real, spoil, log) : await spoilingDaemon(real, spoil, log);
    const b = cloneOf(real);
    gitOut(b, "config", "remote.origin.url", url);
    assert.is(cli(["task", "add", `ship ${kind}`, "--id", `ship-${i}`, "--push"], { cwd: lead, agent: "lead" }).code, 0);
    // Every task on the remote is new to this clone (those of the cases before too).
    const remoteRefs = gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/").split("\n");
    log.length = 0;
    const trace = join(tempDir(), "trace");
    const s = await cliAsync(["sync", "--json"], { cwd: b, agent: "bob", env: { GIT_TRACE: trace } });
    // Kept back as a ref the remote could not send is, in the words of what was wrong.
    assert.is(s.code, 3, `${kind}: ${s.stderr}`);
    assert.equal(s.json.quarantined.map((q: { ref: string }) => q.ref).sort(), remoteRefs, `${kind}: ${s.stdout}`);
    assert.match(s.json.quarantined[0].reason, new RegExp(`answered the fetch with ${said}: the fetch is refused, nothing of it written`), kind);
    assert.equal(answerObjectsIn(bare, b), [], `${kind}: nothing of the answer written`);
    assert.is(gitOut(b, "for-each-ref", "refs/handoff/tasks/", "refs/handoff-remotes/"), "", `${kind}: no ref of it, tracking or local`);
    // Never handed to git: no git fetch started, and the server saw only this process's requests
    // (a git fetch over HTTP starts with a GET of info/refs; over git:// it lists again).
    assert.not.ok(gitRuns(trace).some((r) => r.startsWith("git fetch")), `${kind}: ${gitRuns(trace).join("\n")}`);
    assert.ok(log.some((l) => l.endsWith("fetch")), `${kind}: the fetch went to the server: ${log.join(", ")}`);
    if (kind === "http") assert.not.ok(log.some((l) => l.startsWith("GET")), `http: ${log.join(", ")}`);
    else assert.equal(log.filter((l) => l === "ls-refs").length, 1, `daemon: ${log.join(", ")}`);
  }
});

test.run();
