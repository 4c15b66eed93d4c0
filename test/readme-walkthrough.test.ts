// The README's "Five minutes with two agents" is what a new user runs first, line by line. This
// file runs that block as the README has it (read from README.md, not a copy), in one `sh`, so a
// `cd` or an `export` carries over to the next line as it does in the user's terminal; `git
// handoff` is the built CLI found on PATH, its hooks run for real. Each line's exit status is the
// one its comment gives (`(exit 3)`), else 0; a few of the comments' claims are checked from the
// line's output or a `--json` read right after it (the state moves on with the next lines).
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, succeeded, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

const ROOT = resolve(import.meta.dirname, "..");

/** The lines of the one `sh` block under the heading, blank lines left out. */
function walkthrough(readme: string, heading = "## Five minutes with two agents"): string[] {
  const section = readme.split(heading)[1];
  const block = section && /^```sh\n([\s\S]*?)^```/m.exec(section.split(/^## /m)[0]!);
  if (!block) throw new Error(`README.md has no sh block under "${heading}"`);
  return block[1]!.split("\n").filter((l) => l.trim() !== "");
}

/** A line's trailing comment (the README's lines quote no `#`), or "". */
function commentOf(line: string): string {
  return /\s#\s(.*)$/.exec(line)?.[1] ?? "";
}

/** The exit status a line's comment promises: `(exit N)` in it, else success. */
function promisedStatus(line: string): number {
  return Number(/\(exit (\d+)\)/.exec(commentOf(line))?.[1] ?? 0);
}

interface Step {
  line: string;
  status: number;
  stdout: string;
  stderr: string;
  /** Where the shell is and who it acts as after the line, for the reads that follow it. */
  cwd: string;
  agent: string;
}

/**
 * One long-lived `sh`, fed a line at a time. After each line it prints a marker with the line's
 * status, its directory and HANDOFF_AGENT on stdout, and a marker on stderr, so each line's output
 * is told apart. The line reads no input of ours: its stdin is /dev/null.
 */
class Shell {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = "";
  private err = "";
  private exited = false;
  private wake: () => void = () => {};
  private readonly mark = `@@walk-${process.pid}-${Date.now()}@@`;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn("sh", [], { cwd, env });
    this.child.stdout.on("data", (b) => ((this.out += b), this.wake()));
    this.child.stderr.on("data", (b) => ((this.err += b), this.wake()));
    this.child.on("close", () => ((this.exited = true), this.wake()));
  }

  async run(line: string): Promise<Step> {
    this.child.stdin.write(`{ ${line}\n} </dev/null\n__s=$?; printf '\\n${this.mark} %s %s %s\\n' "$__s" "\${HANDOFF_AGENT:--}" "$PWD"; printf '\\n${this.mark}\\n' >&2\n`);
    const done = new RegExp(`\\n${this.mark} (\\d+) (\\S+) (.*)\\n`);
    for (;;) {
      const m = done.exec(this.out);
      const e = this.err.indexOf(`\n${this.mark}\n`);
      if (m && e >= 0) {
        const step = { line, status: Number(m[1]), agent: m[2]!, cwd: m[3]!, stdout: this.out.slice(0, m.index), stderr: this.err.slice(0, e) };
        this.out = this.out.slice(m.index + m[0].length);
        this.err = this.err.slice(e + this.mark.length + 2);
        return step;
      }
      if (this.exited) throw new Error(`sh exited during: ${line}\n${this.out}\n${this.err}`);
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** A read made by the test after a line: the built CLI, as `agent` (else the shell's) where the shell is. */
function read(step: Step, args: string[], agent = step.agent, cwd = step.cwd): any {
  return succeeded(cli([...args, "--json"], { cwd, agent })).json;
}

/**
 * The comments' checkable claims, each found by a phrase of its comment. Every one must match a
 * line: a comment reworded away from its phrase fails here instead of going unchecked.
 */
const claims: { phrase: string; check: (s: Step, root: string) => void }[] = [
  {
    phrase: "alice gets api",
    check: (s) => {
      const api = read(s, ["task", "show", "api"]);
      assert.is(api.claim?.agent, "alice", "api claimed by alice");
      const leases = read(s, ["leases"]);
      assert.ok(leases.some((l: any) => l.pattern === "src/api/**" && l.agent === "alice" && l.exclusive), "src/api/** hers alone");
    },
  },
  { phrase: "ok for alice", check: (s) => assert.match(s.stdout, /^ok\s+src\/api\/users\.ts/m) },
  {
    phrase: "refused (exit 3): ui is blocked on api",
    check: (s) => {
      assert.match(s.stderr, /\[blocked\]/);
      assert.match(s.stderr, /alice/);
    },
  },
  {
    phrase: "deny (exit 3)",
    check: (s) => {
      assert.match(s.stdout, /^deny\s+src\/api\/users\.ts .*held by alice/m);
      assert.match(s.stdout, /wait: |negotiate: |work_elsewhere: /);
    },
  },
  {
    phrase: "lands in alice's inbox",
    check: (s, root) => {
      const inbox = read(s, ["inbox"], "alice", join(root, "api"));
      assert.ok(inbox.some((e: any) => e.kind === "release_request" && e.from === "bob" && e.task === "api"), JSON.stringify(inbox));
    },
  },
  {
    phrase: "shared by default",
    check: (s) => {
      const leases = read(s, ["leases"]);
      assert.ok(leases.some((l: any) => l.pattern === "docs/profile.md" && l.agent === "bob" && !l.exclusive), JSON.stringify(leases));
    },
  },
  {
    phrase: "its leases end, ui is ready",
    check: (s) => {
      assert.not.ok(read(s, ["leases"]).some((l: any) => l.task === "api"), "no lease serves api");
      assert.ok(read(s, ["ready"]).some((t: any) => t.id === "ui"), "ui is ready");
    },
  },
  {
    phrase: "granted; alice's handoff arrives with it",
    check: (s) => {
      assert.is(read(s, ["task", "show", "ui"]).claim?.agent, "bob");
      assert.match(s.stdout, /handoff api#1 from alice/);
    },
  },
  {
    phrase: "fenced as another agent's words",
    check: (s) => {
      assert.match(s.stdout, /\[untrusted[^\n]*\]\n\s+contract:\n\s+\| GET \/users\/:id -> \{id, name, email\}/);
    },
  },
];

test("the README's walkthrough runs as written, each line with the status its comment gives", async () => {
  const lines = walkthrough(readFileSync(join(ROOT, "README.md"), "utf8"));
  const root = tempDir("handoff-readme-");
  // The user's repository, with a first commit, next to where its worktrees go (`../api`).
  const repo = join(root, "my-repo");
  mkdirSync(repo);
  gitOut(repo, "init", "-q", "-b", "main");
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "initial");
  // What `npm link` puts on PATH: this build's CLI, and the hooks' sh fast path.
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "git-handoff"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, "git-handoff"), 0o755);
  symlinkSync(join(ROOT, "git-hooks/fast-hook.sh"), join(bin, "git-handoff-hook"));
  // A new user's git knows who they are (the walkthrough commits).
  const who = { GIT_AUTHOR_NAME: "user", GIT_AUTHOR_EMAIL: "user@example.invalid", GIT_COMMITTER_NAME: "user", GIT_COMMITTER_EMAIL: "user@example.invalid" };
  const shell = new Shell(root, cleanEnv({ ...who, PATH: `${bin}:${process.env.PATH ?? ""}`, NO_COLOR: "1" }));
  const used = new Set<string>();
  try {
    for (const line of lines) {
      const step = await shell.run(line);
      const said = `\n$ ${line}\n${step.stdout}${step.stderr}`;
      assert.is(step.status, promisedStatus(line), `exit status of${said}`);
      for (const c of claims.filter((c) => commentOf(line).includes(c.phrase))) {
        used.add(c.phrase);
        try {
          c.check(step, root);
        } catch (e) {
          throw new Error(`"${c.phrase}" does not hold after${said}\n${(e as Error).message}`);
        }
      }
    }
  } finally {
    shell.close();
  }
  assert.equal(claims.map((c) => c.phrase).filter((p) => !used.has(p)), [], "claims whose phrase no README line has");
});

test("a line's promised status comes from its comment", () => {
  assert.is(promisedStatus("git handoff claim ui        # refused (exit 3): blocked"), 3);
  assert.is(promisedStatus("git handoff check x.ts      # ok for alice"), 0);
  assert.is(promisedStatus("git commit -m 'not (exit 3) here'"), 0);
});

test.run();
