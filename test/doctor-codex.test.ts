// `git handoff doctor` asks Codex itself whether it runs the git-handoff hooks: Codex skips an
// unapproved hook without a word. No codex binary, or no answer: "unknown", never "ok".
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { codexEnv, newHome } from "./agents/clients.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const codexCheck = (r: { json: any }) => r.json.checks.find((c: any) => c.name === "codex hooks");

function initRepo(): { repo: string; home: string } {
  const repo = tempRepo();
  assert.is(cli(["init"], { cwd: repo }).code, 0);
  const home = newHome();
  mkdirSync(join(home, ".codex"), { recursive: true });
  return { repo, home };
}

test("an untrusted project, then unapproved hooks: warn, with what to do in Codex", () => {
  const { repo, home } = initRepo();
  const never = cli(["doctor", "--json"], { cwd: repo, env: codexEnv(home) });
  assert.is(never.code, 0, never.stderr);
  assert.is(codexCheck(never).status, "warn");
  assert.match(codexCheck(never).detail, /Codex has no .*config\.toml: the project is not trusted in Codex/);
  writeFileSync(join(home, ".codex/config.toml"), 'model = "o3"\n');
  const untrusted = cli(["doctor", "--json"], { cwd: repo, env: codexEnv(home) });
  assert.is(codexCheck(untrusted).status, "warn");
  assert.is(codexCheck(untrusted).detail, "Codex loads no git-handoff hook here: the project is not trusted in Codex");
  writeFileSync(join(home, ".codex/config.toml"), `[projects."${repo}"]\ntrust_level = "trusted"\n`);
  const unapproved = cli(["doctor"], { cwd: repo, env: codexEnv(home) });
  assert.match(unapproved.stdout, /warn codex hooks +2 of 2 git-handoff hook\(s\) not approved in Codex \(untrusted, untrusted\): Codex skips them silently/);
  assert.match(unapproved.stdout, /approve the git-handoff hooks in \/hooks/);
});

test("no codex on PATH: unknown, never ok; a repository without Codex hooks has no such check", () => {
  const { repo, home } = initRepo();
  writeFileSync(join(home, ".codex/config.toml"), "");
  const r = cli(["doctor", "--json"], { cwd: repo, env: { HOME: home, PATH: "/usr/bin:/bin" } });
  assert.is(r.code, 0, r.stderr);
  assert.equal({ ...codexCheck(r), fix: undefined }, { name: "codex hooks", status: "unknown", detail: "could not ask Codex whether it runs the git-handoff hooks (codex is not on PATH)", fix: undefined });
  const plain = tempRepo();
  assert.is(codexCheck(cli(["doctor", "--json"], { cwd: plain })), undefined);
});

test.run();
