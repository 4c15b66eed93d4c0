// uninstall gives the user's agent config back as it was: byte for byte when nothing but our hooks
// changed since init backed it up (and the backup goes), otherwise our entries removed and the
// backup kept for the user to compare.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

// The user's own style: four-space indent, a key order of their own, no trailing newline.
const ORIGINAL = '{\n    "model": "opus",\n    "permissions": {\n        "allow": ["Bash(npm test)"]\n    }\n}';

function repoWithSettings(): string {
  const repo = tempRepo();
  mkdirSync(join(repo, ".claude"));
  writeFileSync(join(repo, ".claude/settings.json"), ORIGINAL);
  return repo;
}

test("init then uninstall: the file byte-identical, no backup left", () => {
  const repo = repoWithSettings();
  assert.is(cli(["init"], { cwd: repo }).code, 0);
  assert.is.not(readFileSync(join(repo, ".claude/settings.json"), "utf8"), ORIGINAL, "init added its hooks");
  assert.ok(existsSync(join(repo, ".claude/settings.json.handoff-backup")));
  const u = cli(["uninstall"], { cwd: repo });
  assert.is(u.code, 0, u.stderr);
  assert.match(u.stdout, /restore \.claude\/settings\.json as it was before git-handoff/);
  assert.is(readFileSync(join(repo, ".claude/settings.json"), "utf8"), ORIGINAL);
  assert.not.ok(existsSync(join(repo, ".claude/settings.json.handoff-backup")));
});

test("a file the user changed meanwhile: our hooks removed, their change kept, the backup kept and named", () => {
  const repo = repoWithSettings();
  assert.is(cli(["init"], { cwd: repo }).code, 0);
  const path = join(repo, ".claude/settings.json");
  const json = JSON.parse(readFileSync(path, "utf8"));
  json.model = "sonnet";
  writeFileSync(path, JSON.stringify(json, null, 2));
  const u = cli(["uninstall"], { cwd: repo });
  assert.is(u.code, 0, u.stderr);
  const after = JSON.parse(readFileSync(path, "utf8"));
  assert.is(after.model, "sonnet");
  assert.not.match(JSON.stringify(after), /git-handoff|handoff hook/);
  assert.ok(existsSync(`${path}.handoff-backup`));
  assert.match(u.stdout, /changed since git-handoff backed it up: kept \.claude\/settings\.json\.handoff-backup/);
});

test.run();
