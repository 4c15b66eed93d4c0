// `git handoff mcp`: the MCP server over stdio. Loaded by the dispatcher without commander.
// stdout carries only the protocol; every log line goes to stderr.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseDuration } from "../core/duration.ts";
import { EXIT_CODES } from "../core/errors.ts";
import { currentDir, resolveDir } from "../git/repo.ts";
import { endLiveGit, finishGitOnSignals } from "../git/run.ts";
import { executeVerificationJob, type VerificationJob } from "../store/verification-runs.ts";
import { openSyncedStore } from "../sync/open.ts";
import { catchInterrupts } from "../work/interrupts.ts";
import { refusalOf } from "./result.ts";
import { LineTransport } from "./line-transport.ts";
import { compileLighterWhenContended } from "./compiler-flags.ts";
import { createServer, directCalls } from "./server.ts";
import { DEFAULT_WAIT_BOUND_MS, McpSession } from "./session.ts";
import { finishServing, STOP_BOUND_MS } from "./stop-serving.ts";

/** Read by the dispatcher's code cache (cli/code-cache.ts): no cache is written after a flag change. */
export { flagsChanged } from "./compiler-flags.ts";

/** Its options are described once, in the CLI's help (commands/mcp-register.ts), which `mcp --help` shows. */
const SEE_HELP = "git handoff help mcp shows how to use it";

interface McpArgs {
  cwd: string;
  /** Internal: run one detached verification (started by complete_task) and exit. */
  verifyJob?: string;
  agent?: string;
  waitBoundMs: number;
}

function usageError(message: string): never {
  throw Object.assign(new Error(message), { usage: true });
}

export function parseArgs(argv: string[]): McpArgs {
  // The current folder is asked for only when needed: one removed under the client fails with a
  // clear not_a_repo when the session opens, and -C with an absolute path does not need it.
  const out: McpArgs = { cwd: "", waitBoundMs: DEFAULT_WAIT_BOUND_MS };
  let sawVerb = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const [flag, inline] = arg.startsWith("--") && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) usageError(`${flag} needs a value`);
      return v;
    };
    if (flag === "-C") out.cwd = out.cwd ? resolve(out.cwd, value()) : resolveDir(value());
    else if (flag === "--agent") out.agent = value();
    else if (flag === "--wait-max") out.waitBoundMs = parseDuration(value(), "--wait-max");
    else if (flag === "--verify-job") out.verifyJob = value();
    else if (flag === "--json") continue; // a global option of the CLI; the protocol is JSON anyway
    else if (flag === "mcp" && !sawVerb) sawVerb = true;
    else usageError(`unknown argument ${JSON.stringify(arg)}`);
  }
  return out;
}

async function main(argv: string[]): Promise<number | null> {
  let args: McpArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if ((e as { usage?: boolean }).usage || refusalOf(e).code === "invalid_input") {
      process.stderr.write(`git-handoff: ${(e as Error).message}; ${SEE_HELP}\n`);
      return 2;
    }
    // -C relative to a current folder that is gone: said as the session's open would say it.
    const r = refusalOf(e);
    if (r.code === "internal") throw e;
    process.stderr.write(`git-handoff: ${r.message}\n`);
    return EXIT_CODES[r.code];
  }
  if (args.verifyJob !== undefined) return runVerificationJob(args.verifyJob);
  compileLighterWhenContended();
  let session: McpSession;
  try {
    session = await McpSession.open({
      cwd: args.cwd || currentDir(),
      waitBoundMs: args.waitBoundMs,
      ...(args.agent !== undefined ? { agent: args.agent } : {}),
      ...runnerEntry(),
    });
  } catch (e) {
    const r = refusalOf(e);
    process.stderr.write(`git-handoff: ${r.message}\n`);
    return EXIT_CODES[r.code];
  }
  const server = createServer(session);
  const transport = new LineTransport();
  const direct = directCalls(server);
  transport.direct = (m, send) => direct.take(m, send);
  let closed = false;
  const shutdown = () => {
    if (closed) return;
    closed = true;
    direct.abortAll();
    session.close(); // stops the long-lived git processes, so the process can exit
    void server.close().catch(() => {});
  };
  transport.onclose = shutdown;
  const log = (line: string) => process.stderr.write(`git-handoff mcp: ${line}\n`);
  let stopping = false;
  /**
   * Exits 0: a stop the host asked for (the protocol's stdio shutdown closes stdin, then sends
   * SIGTERM) is no failure, and a host reads a non-zero status as the server failing. A second
   * signal quits at once with 130, as every verb that runs until stopped does (interrupts.ts).
   */
  const stop = (signalled: boolean) => {
    if (stopping) return;
    stopping = true;
    // A client closing stdin is the ordinary end of a session: nothing to say unless it goes wrong.
    if (signalled) log(`stopping: answering the calls in progress and pushing queued writes (at most ${STOP_BOUND_MS / 1000} s; a second signal quits at once)`);
    void finishServing(transport, session, log)
      .catch((e: unknown) => log(`could not finish: ${(e as Error).message}`))
      .finally(() => {
        shutdown();
        endLiveGit(); // what the bound cut off: not left running after the server
        process.exit(0);
      });
  };
  // Kept while it finishes: a signal then is the first (nothing more to start), a later one quits.
  catchInterrupts(() => stop(true));
  // A push under way is part of a call to answer: the signal does not reach it (stop-serving.ts).
  finishGitOnSignals();
  process.stdin.on("end", () => stop(false));
  // A host that closed our stdout reads no answer any more (many close both pipes): stop as on
  // stdin's end. The answer that met the closed pipe is dropped; the queued writes are still pushed.
  transport.onoutputgone = () => stop(false);
  await server.connect(transport);
  const store = await session.store();
  process.stderr.write(`git-handoff mcp: serving ${store.repo.commonDir} as ${store.actor.agent} (${session.agentSource})\n`);
  return null;
}

/** The bundled dispatcher next to this bundle starts detached verification runners. */
function runnerEntry(): { runnerEntry?: string[] } {
  const cli = typeof __dirname === "string" ? join(__dirname, "git-handoff.cjs") : "";
  return cli && existsSync(cli) ? { runnerEntry: [cli, "mcp"] } : {};
}

/** A detached runner: verify and record as `done --verify`, write the verdict, exit. */
async function runVerificationJob(json: string): Promise<number> {
  const job = JSON.parse(json) as VerificationJob;
  const env = { ...process.env };
  delete env.HANDOFF_AGENT;
  const store = await openSyncedStore({ cwd: job.cwd, env, agent: job.agent });
  try {
    await executeVerificationJob(store, job);
  } finally {
    store.close();
  }
  return 0;
}

export function run(argv: string[]): void {
  main(argv).then(
    (code) => {
      if (code !== null) process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`git-handoff: unexpected error: ${(e as Error)?.message ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
