// Without HANDOFF_AGENT, USER or USERNAME, an agent is named after the login name getpwuid(3)
// gives, read from /etc/passwd where the C library reads it from there first (login-name.ts), so a
// cold command does not load node:os for it. The name must be the one node:os gives, and wherever
// the files might not say what the C library would, node:os must be asked (null here).
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loginName, nameInFiles } from "../src/git/login-name.ts";
import { CLI, cleanEnv, cleanupTemp, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const FILES = "# comment\n\npasswd:         files systemd\ngroup:          files systemd\n";
const PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nann:x:1000:1000:Ann,,,:/home/ann:/bin/bash\n";

test("the name of the first line with this uid, where passwd lookups go to the files first", () => {
  assert.is(nameInFiles(FILES, PASSWD, 1000), "ann");
  assert.is(nameInFiles(FILES, PASSWD, 0), "root");
  assert.is(nameInFiles("passwd:files\n", `${PASSWD}bob:x:1000:1000::/home/bob:/bin/sh\n`, 1000), "ann", "the first of two lines with the uid");
  assert.is(nameInFiles("passwd: files [NOTFOUND=return] sss\n", PASSWD, 1), "daemon");
  assert.is(nameInFiles(FILES, `${PASSWD.replace("\n", "\r\n")}`, 0), "root");
});

test("node:os is asked wherever the files might not give the C library's answer", () => {
  assert.is(nameInFiles(FILES, PASSWD, 4242), null, "no such user in the file: another source may know it");
  assert.is(nameInFiles("passwd: compat\n", PASSWD, 1000), null, "compat: +/- lines mean other sources");
  assert.is(nameInFiles("passwd: sss files\n", PASSWD, 1000), null, "another source first");
  assert.is(nameInFiles("group: files\n", PASSWD, 1000), null, "no passwd line: the C library's default");
  assert.is(nameInFiles("passwd: files\npasswd: sss\n", PASSWD, 1000), null, "two passwd lines");
  assert.is(nameInFiles("passwd:\npasswd: files\n", PASSWD, 1000), null, "two passwd lines, the first empty");
  assert.is(nameInFiles("passwd: filesx\n", PASSWD, 1000), null);
  assert.is(nameInFiles(FILES, `+ann:x:1000:1000::/:/bin/sh\n${PASSWD}`, 1000), null, "a +/- line");
  assert.is(nameInFiles(FILES, `#old:x:1000:1000::/:/bin/sh\n${PASSWD}`, 1000), null, "a comment line before it");
  assert.is(nameInFiles(FILES, `odd:x:1000\n${PASSWD}`, 1000), null, "a line that is not seven fields");
  assert.is(nameInFiles(FILES, `odd:x: 7:7::/:/bin/sh\n${PASSWD}`, 1000), null, "a uid that is not digits");
});

test("this process's login name is the one node:os gives", () => {
  assert.is(loginName(), userInfo().username);
});

/** The CLI run with no agent name, USER or USERNAME in its environment; with the builtins it loaded. */
function nameless(repo: string, args: string[]): { stdout: string; modules: string[] } {
  const dir = tempDir();
  const out = join(dir, "modules.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
  const env = cleanEnv();
  delete env.USER;
  delete env.USERNAME;
  const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env, encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  const modules = readFileSync(out, "utf8").split("\n").filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice("NativeModule ".length));
  return { stdout: r.stdout, modules };
}

test("a cold command with no name given names its agent after the login name, without loading node:os for it", () => {
  const repo = tempRepo();
  nameless(repo, ["task", "add", "look at me", "--id", "t1"]);
  nameless(repo, ["claim", "t1"]);
  const show = nameless(repo, ["task", "show", "t1", "--json"]);
  const agent: string = JSON.parse(show.stdout).claim.agent;
  assert.ok(agent.startsWith(`${userInfo().username}@`), agent);
  if (process.platform === "linux" && /^passwd:\s*files\b/m.test(readFileSync("/etc/nsswitch.conf", "utf8"))) {
    assert.not.ok(show.modules.includes("os"), `os is not loaded: ${show.modules.join(" ")}`);
  }
});

test.run();
