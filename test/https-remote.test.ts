// A sync remote over https:// with credentials, pushed to, listed and fetched from in process
// (src/git/http-remote.ts, src/git/credentials.ts): the certificate checked against GIT_SSL_CAINFO's
// authority, the credentials asked of git's own helper (`git credential fill`) once the remote asks
// for them, sent only to that URL and never written by git-handoff; a remote whose certificate is
// not trusted here, or for which no helper gives credentials, is git's, which says why in its
// words. Real `git http-backend` behind the test's HTTPS server with Basic authentication.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir } from "./support/repo.ts";
import { serveRoot, startHttp, TLS_CERT, type GitServer } from "./support/servers.ts";
import { overStdio } from "./support/mcp.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

const USER = "alice";
const PASSWORD = "s3cret-Pa55-for-tests";
/** What every command of these clones runs with: the test authority trusted, no prompt. */
const ENV = { GIT_SSL_CAINFO: TLS_CERT, GIT_TERMINAL_PROMPT: "0" };

/** A bare remote served over https with Basic authentication, a request log, and a way to make clones of it. */
async function served(name: string) {
  const root = serveRoot();
  const log = join(tempDir("handoff-https-log-"), "requests.log");
  const connectionLog = join(tempDir("handoff-https-log-"), "connections.log");
  writeFileSync(log, "");
  writeFileSync(connectionLog, "");
  const https = await startHttp(root.root, log, { tls: true, basicAuth: `${USER}:${PASSWORD}`, connectionLog });
  servers.push(https);
  const bare = root.bare(name);
  const url = https.url(name);
  const seed = tempDir("handoff-https-seed-");
  gitOut(seed, "init", "-q", "-b", "main");
  gitOut(seed, "commit", "-q", "--allow-empty", "-m", "start");
  gitOut(seed, "push", "-q", bare, "main");
  /** A clone (made by path, then pointed at the https URL) whose credential helper is the store helper with `password`. */
  const clone = (password: string | null) => {
    const dir = tempDir("handoff-https-clone-");
    gitOut(dir, "clone", "-q", bare, ".");
    gitOut(dir, "config", "remote.origin.url", url);
    if (password !== null) {
      const file = join(tempDir("handoff-creds-"), "credentials");
      writeFileSync(file, `https://${USER}:${password}@${new URL(url).host}\n`);
      gitOut(dir, "config", "credential.helper", `store --file=${file}`);
    }
    return dir;
  };
  const requests = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
  /** The connections accepted since the last call (each a TCP connection and a TLS handshake). */
  const connections = () => {
    const n = readFileSync(connectionLog, "utf8").split("\n").filter(Boolean).length;
    writeFileSync(connectionLog, "");
    return n;
  };
  return { bare, url, clone, requests, log, connections };
}

/** Every file under `dir` whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.size < 50_000_000 && readFileSync(p).includes(needle)) found.push(p);
    }
  };
  walk(dir);
  return found;
}

test("over https:// with a credential helper: the remote's 401 asked once, then one authenticated POST per claim; the other clone syncs in two requests", async () => {
  const { bare, url, clone, requests, log } = await served("sec");
  const a = clone(PASSWORD);
  const b = clone(PASSWORD);
  const add = cli(["task", "add", "ship", "--id", "ship", "--scope", "src/**", "--push"], { cwd: a, agent: "lead", env: ENV });
  assert.is(add.code, 0, add.stderr);
  // The capability check met the 401, asked git's helper, and was answered with the credential.
  assert.equal(requests().filter((r) => r.includes("receive-pack")), [
    "GET /sec.git/info/refs?service=git-receive-pack (git-handoff) 401",
    "GET /sec.git/info/refs?service=git-receive-pack (git-handoff)",
    "POST /sec.git/git-receive-pack (git-handoff)",
  ]);
  const memo = JSON.parse(readFileSync(join(a, ".git/handoff/http-remotes.json"), "utf8"));
  assert.equal(memo.remotes[url].push.ok, true);
  assert.equal(memo.remotes[url].push.auth, true);
  // Nothing git-handoff keeps holds the password (git's own helper file is outside the clone).
  assert.equal(filesHolding(join(a, ".git"), PASSWORD), []);
  writeFileSync(log, "");
  const won = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice", env: ENV });
  assert.is(won.code, 0, won.stderr);
  // The credential sent with the push at once: no 401 first, no advertisement, no git push.
  assert.equal(requests().filter((r) => r.includes("receive-pack")), ["POST /sec.git/git-receive-pack (git-handoff)"]);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "alice");
  assert.is(gitOut(bare, "fsck", "--no-dangling", "--no-progress").trim(), "");
  // b's first listing meets the 401 once; the fetch that follows sends the credential at once.
  writeFileSync(log, "");
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob", env: ENV });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice");
  assert.ok(requests().every((r) => r.includes("(git-handoff")), requests().join("\n"));
  assert.is(requests().filter((r) => r.endsWith(" 401")).length, 1, requests().join("\n"));
  assert.equal(JSON.parse(readFileSync(join(b, ".git/handoff/http-remotes.json"), "utf8")).remotes[url].readAuth, true);
  assert.is(cli(["release", "ship", "--push"], { cwd: a, agent: "alice", env: ENV }).code, 0);
  writeFileSync(log, "");
  const synced = cli(["sync", "--json"], { cwd: b, agent: "bob", env: ENV });
  assert.is(synced.code, 0, synced.stderr);
  assert.equal(requests().filter((r) => r.includes("upload-pack")), ["POST /sec.git/git-upload-pack (git-handoff ls-refs)", "POST /sec.git/git-upload-pack (git-handoff fetch)"]);
  assert.is(gitOut(b, "rev-parse", "refs/handoff/tasks/ship"), gitOut(a, "rev-parse", "refs/handoff/tasks/ship"));
  assert.is(gitOut(b, "fsck", "--no-dangling", "--no-progress").trim(), "");
  assert.equal(filesHolding(join(b, ".git"), PASSWORD), []);
  const doctor = cli(["doctor", "--json"], { cwd: b, env: ENV });
  const line = (doctor.json.checks as { name: string; detail: string }[]).find((c) => c.name === "remote-over-http");
  assert.match(line?.detail ?? "", new RegExp(`${url.replace(/[.]/g, "\\.")}: pushes, listings and fetches are requests of this process`), doctor.stdout);
  // Each clone says what it saw the remote ask credentials for: b listed and fetched, a pushed.
  assert.match(line?.detail ?? "", /asks credentials for (pushes, )?listings and fetches, given by git's credential helpers/, doctor.stdout);
  const ofA = (cli(["doctor", "--json"], { cwd: a, env: ENV }).json.checks as { name: string; detail: string }[]).find((c) => c.name === "remote-over-http");
  assert.match(ofA?.detail ?? "", /asks credentials for pushes(, listings and fetches)?, given by/);
});

test("no credential from git's helpers, a wrong one, or a certificate not trusted here: git's turn, which says why; nothing lands", async () => {
  const { bare, url, clone, requests, log } = await served("shut");
  const lead = clone(PASSWORD);
  assert.is(cli(["task", "add", "ship", "--id", "ship", "--push"], { cwd: lead, agent: "lead", env: ENV }).code, 0);
  const onRemote = gitOut(bare, "for-each-ref", "refs/handoff/");
  const refused = (dir: string, env: Record<string, string>, why: RegExp) => {
    const before = handoffRefs(dir);
    writeFileSync(log, "");
    const r = cli(["claim", "ship", "--json"], { cwd: dir, agent: "mallory", env });
    assert.is.not(r.code, 0, r.stdout);
    assert.match(r.json.error.message, why);
    assert.is(gitOut(bare, "for-each-ref", "refs/handoff/"), onRemote);
    assert.equal(handoffRefs(dir), before);
    return requests();
  };
  // No helper: git's own push asked after ours (git's requests carry no mark), and git could not prompt.
  const none = clone(null);
  const seen = refused(none, ENV, /could not read Username|terminal prompts disabled|Authentication failed/i);
  assert.ok(seen.some((r) => r.includes("(git-handoff") && r.endsWith(" 401")), seen.join("\n"));
  assert.ok(seen.some((r) => !r.includes("(git-handoff")), seen.join("\n"));
  // A wrong password: git-handoff's request refused without it and with it (nothing remembered:
  // mended in the helper, it works at once), then git's own request is refused as well.
  const wrong = clone("not-the-password");
  const asked = refused(wrong, ENV, /Authentication failed|401|could not read/i);
  assert.ok(asked.filter((r) => r.includes("(git-handoff") && r.endsWith(" 401")).length >= 2, asked.join("\n"));
  assert.ok(asked.some((r) => !r.includes("(git-handoff")), asked.join("\n"));
  // The authority not given: the handshake fails before anything is sent, git's turn for the hour, doctor says so.
  const untrusting = clone(PASSWORD);
  refused(untrusting, { GIT_TERMINAL_PROMPT: "0" }, /certificate|SSL/i);
  const memo = JSON.parse(readFileSync(join(untrusting, ".git/handoff/http-remotes.json"), "utf8"));
  assert.match(memo.remotes[url].tls.why, /certificate|self.signed/i);
  const doctor = cli(["doctor", "--json"], { cwd: untrusting, env: { GIT_TERMINAL_PROMPT: "0" } });
  const line = (doctor.json.checks as { name: string; detail: string }[]).find((c) => c.name === "remote-over-http");
  assert.match(line?.detail ?? "", /certificate was not accepted here/, doctor.stdout);
  // GIT_SSL_NO_VERIFY and http.sslVerify are git's settings: the claim goes through git (its requests unmarked) and lands.
  const relaxed = clone(PASSWORD);
  writeFileSync(log, "");
  const viaGit = cli(["claim", "ship", "--json"], { cwd: relaxed, agent: "carol", env: { GIT_SSL_NO_VERIFY: "1", GIT_TERMINAL_PROMPT: "0" } });
  assert.is(viaGit.code, 0, viaGit.stderr);
  assert.ok(requests().length > 0 && requests().every((r) => !r.includes("(git-handoff")), requests().join("\n"));
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "carol");
  gitOut(relaxed, "config", "http.sslVerify", "false");
  const d2 = cli(["doctor", "--json"], { cwd: relaxed, env: ENV });
  assert.match((d2.json.checks as { name: string; detail: string }[]).find((c) => c.name === "remote-over-http")?.detail ?? "", /http\.sslverify/i, d2.stdout);
});

test("connections are kept: a one-shot claim's requests share one TLS connection, and so do a running server's calls", async () => {
  const { clone, requests, log, connections } = await served("kept");
  const a = clone(PASSWORD);
  for (const id of ["t1", "t2", "t3"]) assert.is(cli(["task", "add", id, "--id", id, "--scope", `src/${id}/**`, "--push"], { cwd: a, agent: "lead", env: ENV }).code, 0);
  connections();
  writeFileSync(log, "");
  // A claim after a lost race: the listing, the fetch and the push again, in one process.
  const b = clone(PASSWORD);
  assert.is(cli(["claim", "t1", "--json"], { cwd: a, agent: "alice", env: ENV }).code, 0);
  connections();
  writeFileSync(log, "");
  const lost = cli(["claim", "t1", "--json"], { cwd: b, agent: "bob", env: ENV });
  assert.is(lost.code, 3, lost.stderr);
  const oneShot = requests().length;
  assert.ok(oneShot >= 3, requests().join("\n"));
  assert.is(connections(), 1, `${oneShot} requests`);
  // A running server: its claims' requests, one after the other, on the connection it keeps.
  const server = await overStdio(a, { agent: "carol", env: ENV, checkOutput: false });
  try {
    writeFileSync(log, "");
    for (const id of ["t2", "t3"]) {
      const r = await server.call("claim_task", { id, over_capacity: true });
      assert.is(r.isError, undefined, JSON.stringify(r.content));
    }
    const calls = requests();
    assert.ok(calls.length >= 2 && calls.every((r) => r.includes("(git-handoff") && !r.endsWith(" 401")), calls.join("\n"));
    assert.is(connections(), 1, `${calls.length} requests`);
  } finally {
    await server.close();
  }
});

test.run();
