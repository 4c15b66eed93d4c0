// Smart HTTP for tests: every request runs `git http-backend` as a CGI program. Runs as its own
// process (tests call the CLI synchronously, which would block an in-process server) and prints
// its port on the first line of stdout. Usage: node git-http-server.mjs <project-root> [request-log]
// With a request log, one line per request (`GET /r.git/info/refs?service=git-upload-pack`) is
// appended to it, so a test can count what the remote was asked (git-handoff's own requests marked).
// HANDOFF_TEST_TLS=<key file>:<certificate file> serves https instead; HANDOFF_TEST_BASIC_AUTH=
// <user>:<password> answers 401 to every request without those credentials (logged with " 401").
// HANDOFF_TEST_CONNECTION_LOG=<file> appends one line per connection the server accepts.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";

const root = process.argv[2];
const requestLog = process.argv[3];
const children = new Set();
const tls = process.env.HANDOFF_TEST_TLS?.split(":");
const basic = process.env.HANDOFF_TEST_BASIC_AUTH;

const handle = (req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const line = `${req.method} ${url.pathname}${url.search}`;
  const ours = String(req.headers["user-agent"] ?? "").startsWith("git-handoff");
  if (basic && req.headers.authorization !== `Basic ${Buffer.from(basic).toString("base64")}`) {
    if (requestLog) appendFileSync(requestLog, `${line}${ours ? " (git-handoff)" : ""} 401\n`);
    req.resume();
    res.writeHead(401, { "WWW-Authenticate": 'Basic realm="test"', "Content-Type": "text/plain" });
    return void res.end("credentials wanted\n");
  }
  // git-handoff's own requests (src/git/http-remote.ts) are marked, with a v2 command's name:
  // `POST /r.git/git-upload-pack (git-handoff ls-refs)`; git's are as it sent them.
  if (requestLog) {
    if (!ours || req.method !== "POST") appendFileSync(requestLog, `${line}${ours ? " (git-handoff)" : ""}\n`);
    else req.once("data", (chunk) => {
      const command = /^[0-9a-f]{4}command=([a-z-]+)/.exec(chunk.toString("latin1", 0, 40))?.[1];
      appendFileSync(requestLog, `${line} (git-handoff${command ? ` ${command}` : ""})\n`);
    });
  }
  const env = { ...process.env };
  for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"]) delete env[k];
  Object.assign(env, {
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    REQUEST_METHOD: req.method ?? "GET",
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_ADDR: "127.0.0.1",
    GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
    HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
  });
  if (req.headers["content-length"]) env.CONTENT_LENGTH = String(req.headers["content-length"]);
  const cgi = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
  children.add(cgi);
  cgi.on("exit", () => children.delete(cgi));
  cgi.stderr.resume();
  cgi.stdin.on("error", () => {});
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  cgi.stdout.on("data", (chunk) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const k = line.slice(0, colon).trim();
      const v = line.slice(colon + 1).trim();
      if (k.toLowerCase() === "status") status = Number.parseInt(v, 10) || 200;
      else res.setHeader(k, v);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  cgi.stdout.on("end", () => {
    if (!headersDone) res.writeHead(500);
    res.end();
  });
};
const server = tls ? createTlsServer({ key: readFileSync(tls[0]), cert: readFileSync(tls[1]) }, handle) : createServer(handle);
const connectionLog = process.env.HANDOFF_TEST_CONNECTION_LOG;
if (connectionLog) server.on("connection", () => appendFileSync(connectionLog, "connection\n"));

function shutdown() {
  for (const c of children) c.kill("SIGKILL");
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
// Never outlive the test that started us.
process.stdin.on("end", shutdown);
process.stdin.resume();

server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
