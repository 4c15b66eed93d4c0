// Paths resolve to where they really are: an edit through a symlink (to the repository, or inside
// it) to a leased file is judged as that file, for every agent's hook payload; an in-repo symlink
// that points outside the repository is refused by the CLI and warned about (denied in strict mode).
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** alice holds src/api/** exclusively; links reach src/api/users.ts three ways. */
function linkedRepo() {
  const repo = tempRepo();
  mkdirSync(join(repo, "src/api"), { recursive: true });
  writeFileSync(join(repo, "src/api/users.ts"), "export const users = [];\n");
  assert.is(cli(["lease", "src/api/**", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  const elsewhere = tempDir("handoff-link-");
  const repoLink = join(elsewhere, "repo-link");
  symlinkSync(repo, repoLink); // the repository opened through a symlinked folder
  symlinkSync("src/api/users.ts", join(repo, "alias.ts")); // an in-repo link to the leased file
  symlinkSync(join(repo, "src/api"), join(repo, "api-dir")); // an in-repo link to the leased folder
  const outsideFile = join(elsewhere, "outside.txt");
  writeFileSync(outsideFile, "not ours\n");
  symlinkSync(outsideFile, join(repo, "escape.txt")); // an in-repo link to outside the repository
  return { repo, repoLink, paths: [join(repoLink, "src/api/users.ts"), join(repo, "alias.ts"), join(repo, "api-dir/users.ts"), join(repoLink, "alias.ts")] };
}

const payloads: Record<string, (path: string, cwd: string) => unknown> = {
  "claude-pre-tool-use": (p, cwd) => ({ session_id: "s", cwd, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: p, old_string: "a", new_string: "b" } }),
  "codex-pre-tool-use": (p, cwd) => ({ session_id: "s", cwd, hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: `*** Begin Patch\n*** Update File: ${p}\n@@\n-a\n+b\n*** End Patch\n` } }),
  "cursor-pre-tool-use": (p, cwd) => ({ conversation_id: "c", hook_event_name: "preToolUse", workspace_roots: [cwd], tool_name: "Write", tool_input: { file_path: p, contents: "x" } }),
  "gemini-before-tool": (p, cwd) => ({ session_id: "s", cwd, hook_event_name: "BeforeTool", tool_name: "replace", tool_input: { file_path: p, old_string: "a", new_string: "b" } }),
};

function denied(name: string, out: any): boolean {
  if (name === "cursor-pre-tool-use") return out.permission === "deny";
  if (name === "gemini-before-tool") return out.decision === "deny";
  return out.hookSpecificOutput?.permissionDecision === "deny";
}

test("a symlinked path to an exclusively leased file is denied by the Claude, Codex, Cursor and Gemini hooks", () => {
  const { repo, repoLink, paths } = linkedRepo();
  // Each agent's hook only takes the paths and the folder out of its payload; one decision, the
  // same for all, resolves the links (src/hooks/agents.ts). So Claude's hook is asked with every
  // path from both folders, and each other hook with every path, from the two folders in turn:
  // every hook sees every kind of link and both folders, at a hook process each.
  for (const [h, name] of Object.keys(payloads).entries()) {
    for (const [i, p] of paths.entries()) {
      for (const cwd of h === 0 ? [repo, repoLink] : [[repo, repoLink][(i + h) % 2]!]) {
        const r = cli(["hook", name], { cwd: repo, agent: "bob", input: JSON.stringify(payloads[name]!(p, cwd)) });
        assert.is(r.code, 0, r.stderr);
        assert.ok(denied(name, r.json), `${name} ${p} (cwd ${cwd}): ${r.stdout}`);
        assert.match(r.stdout, /src\/api\/users\.ts is inside an exclusive lease on src\/api\/\*\* held by alice/);
      }
    }
  }
});

test("an in-repo symlink to outside the repository: not checked with a warning, denied in strict mode", () => {
  const { repo } = linkedRepo();
  const input = JSON.stringify(payloads["claude-pre-tool-use"]!(join(repo, "escape.txt"), repo));
  const r = cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.hookSpecificOutput.permissionDecision, undefined);
  assert.match(r.json.hookSpecificOutput.additionalContext, /not checked \(outside the repository\).*\n.*escape\.txt is a path in the repository through a symlink to outside it/);
  writeFileSync(join(repo, ".handoff.yaml"), "mode: strict\n");
  const strict = cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input });
  assert.is(strict.json.hookSpecificOutput.permissionDecision, "deny", strict.stdout);
  assert.match(strict.json.hookSpecificOutput.permissionDecisionReason, /strict mode: denied/);
});

test("the CLI judges and leases real locations: through a symlink to a leased file is refused; a link out of the repository exits 2", () => {
  const { repo, repoLink } = linkedRepo();
  const check = cli(["check", "alias.ts", "--json"], { cwd: repo, agent: "bob" });
  assert.is(check.code, 3, check.stdout + check.stderr);
  assert.match(check.stdout, /src\/api\/users\.ts/);
  const lease = cli(["lease", "alias.ts", "--exclusive"], { cwd: repo, agent: "bob" });
  assert.is(lease.code, 3, "bob cannot lease alice's file under another name");
  const esc = cli(["lease", "escape.txt"], { cwd: repo, agent: "bob" });
  assert.is(esc.code, 2);
  assert.match(esc.stderr, /escape\.txt" is a symlink to .*outside\.txt, outside the repository/);
  const up = cli(["lease", "../not-there.txt"], { cwd: repo, agent: "bob" });
  assert.is(up.code, 2);
  assert.match(up.stderr, /^git-handoff: path "\.\.\/not-there\.txt" is outside the repository /, "named as typed");
  assert.not.match(up.stderr, /symlink/, "no symlink was followed");
  // A repository opened through a symlinked folder works as if opened directly.
  const viaLink = cli(["lease", "src/api/users.ts", "--json"], { cwd: repoLink, agent: "bob" });
  assert.is(viaLink.code, 3, viaLink.stderr);
  const ok = cli(["lease", "README.md", "--json"], { cwd: repoLink, agent: "bob" });
  assert.is(ok.code, 0, ok.stderr);
  assert.equal(ok.json.leased.map((l: any) => l.pattern), ["README.md"]);
});

test("task scopes and lease globs go through symlinks as lease paths do: out of the repository refused, inside it the real folder", () => {
  const repo = tempRepo();
  mkdirSync(join(repo, "src"));
  symlinkSync(tempDir(), join(repo, "outlink"));
  symlinkSync("src", join(repo, "srclink"));
  const before = cli(["task", "list", "--json"], { cwd: repo }).stdout;
  for (const scope of ["outlink/passwd", "outlink/**", "outlink/deep/*.ts"]) {
    const r = cli(["task", "add", "x", "--id", "x", "--scope", scope], { cwd: repo, agent: "lead" });
    assert.is(r.code, 2, `${scope}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`scope "${scope.replace(/[*.]/g, "\\$&")}" goes through a symlink to .*, outside the repository`));
    const l = cli(["lease", scope], { cwd: repo, agent: "bob" });
    assert.is(l.code, 2, `lease ${scope}: ${l.stderr}`);
  }
  const up = cli(["task", "add", "x", "--id", "x", "--scope", "../x/**"], { cwd: repo, agent: "lead" });
  assert.is(up.code, 2);
  assert.match(up.stderr, /^git-handoff: path "\.\.\/x\/\*\*" is outside the repository /, "named as typed, no symlink said");
  assert.is(cli(["task", "list", "--json"], { cwd: repo }).stdout, before, "nothing was added");
  const inside = cli(["task", "add", "y", "--id", "y", "--scope", "srclink/**", "--json"], { cwd: repo, agent: "lead" });
  assert.is(inside.code, 0, inside.stderr);
  assert.equal(inside.json.scope, ["src/**"], "the scope names the real folder, which edits are judged by");
  const lease = cli(["lease", "srclink/*.ts", "--json"], { cwd: repo, agent: "bob" });
  assert.equal(lease.json.leased.map((l: { pattern: string }) => l.pattern), ["src/*.ts"]);
  assert.is(cli(["task", "add", "z", "--id", "z", "--scope", "**/*.md"], { cwd: repo, agent: "lead" }).code, 0, "a glob that starts with a pattern is kept");
});

test("a dangling symlink is judged as the file a write through it creates: into a lease is denied, a loop does not hang", () => {
  const { repo } = linkedRepo();
  symlinkSync("src/api/new.ts", join(repo, "dangling.ts")); // its target is not there yet
  symlinkSync("dangling.ts", join(repo, "chain.ts")); // a link to that link
  symlinkSync("src/api/sub", join(repo, "new-dir")); // a link to a folder not made yet
  symlinkSync("loop-b", join(repo, "loop-a"));
  symlinkSync("loop-a", join(repo, "loop-b"));
  const targets: [string, string][] = [["dangling.ts", "src/api/new.ts"], ["chain.ts", "src/api/new.ts"], ["new-dir/x.ts", "src/api/sub/x.ts"]];
  // Claude's hook with every dangling name, each other hook with one of them in turn (as above: the
  // links are resolved by the one decision all hooks share).
  for (const [h, name] of Object.keys(payloads).entries()) {
    for (const [path, real] of h === 0 ? targets : [targets[(h - 1) % targets.length]!]) {
      const r = cli(["hook", name], { cwd: repo, agent: "bob", input: JSON.stringify(payloads[name]!(join(repo, path), repo)) });
      assert.is(r.code, 0, r.stderr);
      assert.ok(denied(name, r.json), `${name} ${path}: ${r.stdout}`);
      assert.ok(r.stdout.includes(`${real} is inside an exclusive lease on src/api/** held by alice`), r.stdout);
    }
  }
  for (const [path] of targets) assert.is(cli(["check", path], { cwd: repo, agent: "bob" }).code, 3, path);
  assert.is(cli(["lease", "dangling.ts", "--exclusive"], { cwd: repo, agent: "bob" }).code, 3, "bob cannot lease alice's file under a dangling name");
  // A loop of links leads nowhere a write could go: judged as named, answered at once.
  const loop = cli(["check", "loop-a", "--json"], { cwd: repo, agent: "bob" });
  assert.is(loop.code, 0, loop.stderr);
  assert.equal(loop.json.paths.map((p: any) => p.path), ["loop-a"]);
});

test.run();
