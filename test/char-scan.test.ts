// The character tests written as loops (core/char-scan.ts) answer as the patterns they replace,
// over strings built from the characters each pattern turns on; `check` prints its verdicts in
// their column as before; and the cache readers that no longer go through readFileSync on a
// descriptor (git/safe-file.ts) read as before.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, posix } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hasControlChar, hasDotDotSegment, hasExtglob, isWordText, startsWithDrive } from "../src/core/char-scan.ts";
import { relativeTo } from "../src/core/paths.ts";
import { readOwnTextNoFollow, readTextNoFollow } from "../src/git/safe-file.ts";
import { cleanupTemp, cli, succeeded, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** Every string up to `max` characters over `alphabet`. */
function strings(alphabet: string[], max: number): string[] {
  let level = [""];
  const all = [""];
  for (let n = 1; n <= max; n++) {
    level = level.flatMap((s) => alphabet.map((c) => s + c));
    all.push(...level);
  }
  return all;
}

const cases: [string, (s: string) => boolean, RegExp, string[]][] = [
  ["hasControlChar", hasControlChar, /[\x00-\x1f]/, ["a", "\x00", "\x1f", " ", "\x7f", "\n", "é"]],
  ["hasExtglob", hasExtglob, /[@!+*?]\(/, ["(", "@", "!", "+", "*", "?", "a", ")"]],
  ["startsWithDrive", startsWithDrive, /^[A-Za-z]:\//, ["a", "Z", "1", ":", "/", "\\", "@", "[", "`", "{"]],
  ["hasDotDotSegment", hasDotDotSegment, /(^|[/\\])\.\.([/\\]|$)/, [".", "/", "\\", "a"]],
  ["isWordText", isWordText, /^\w+$/, ["a", "Z", "0", "9", "_", " ", ":", "-", "é"]],
];

for (const [name, scan, pattern, alphabet] of cases) {
  test(`${name} answers as ${pattern}`, () => {
    const max = alphabet.length > 8 ? 3 : alphabet.length > 5 ? 4 : 6;
    let n = 0;
    for (const s of strings(alphabet, max)) {
      assert.is(scan(s), pattern.test(s), `${name}(${JSON.stringify(s)})`);
      n++;
    }
    assert.ok(n > 500);
  });
}

test("the typed paths the hook sees are answered as the patterns answer them", () => {
  for (const s of ["/repo/src/a.ts", "C:/repo/a.ts", "c:\\repo", "src/../a.ts", "..", "a/..", "../a", "a/...", "a..b", "!(x)", "src/@(a|b).ts", "(a)", "x\ty", "/tmp/handoff-test-Ab/pkg42/src/file3.ts"]) {
    for (const [name, scan, pattern] of cases) assert.is(scan(s), pattern.test(s), `${name}(${JSON.stringify(s)})`);
  }
});

test("a path relative to the root is what posix.relative says, for every root and path of a few segments", () => {
  // relativeTo cuts a path inside the root instead of asking posix.relative (paths.ts).
  const segs = ["a", "b", "ab", "a.b", "..", ".", "", "x"];
  const forms: string[] = [""];
  for (let n = 0; n < 2; n++) for (const f of forms.splice(0)) for (const s of segs) forms.push(f, `${f}/${s}`);
  const all = [...new Set(forms.flatMap((f) => [f, f.slice(1), `${f}/`, `/a${f}`, `/a/b${f}`]))];
  let cut = 0;
  for (const root of all) {
    for (const path of all) {
      const want = posix.relative(root, path);
      assert.is(relativeTo(root, path), want, `${JSON.stringify(root)} -> ${JSON.stringify(path)}`);
      if (root.length > 1 && path.startsWith(`${root}/`) && want === path.slice(root.length + 1)) cut++;
    }
  }
  assert.ok(all.length > 300 && cut > 300, `${all.length} forms, ${cut} inside their root`);
});

test("a cache's text is read whole, never through a link, a folder or another user's file as text", () => {
  const dir = tempDir();
  const file = join(dir, "a.cache");
  const text = "\ufeffline one\nü \ud83d\ude00 end\n".repeat(200);
  writeFileSync(file, text);
  assert.is(readTextNoFollow(file), text);
  assert.is(readOwnTextNoFollow(file), text);
  assert.is(readTextNoFollow(file, "latin1"), Buffer.from(text).toString("latin1"));
  writeFileSync(join(dir, "empty"), "");
  assert.is(readTextNoFollow(join(dir, "empty")), "");
  assert.is(readOwnTextNoFollow(join(dir, "empty")), "");
  symlinkSync(file, join(dir, "link"));
  assert.is(readTextNoFollow(join(dir, "link")), null);
  assert.is(readOwnTextNoFollow(join(dir, "link")), null);
  mkdirSync(join(dir, "folder"));
  assert.is(readTextNoFollow(join(dir, "folder")), null);
  assert.is(readOwnTextNoFollow(join(dir, "folder")), null);
  assert.is(readTextNoFollow(join(dir, "none")), null);
  assert.is(readOwnTextNoFollow(join(dir, "none")), null);
  // A FIFO at a cache's name: found empty or not at all, never waited on.
  execFileSync("mkfifo", [join(dir, "fifo")]);
  assert.ok(!readTextNoFollow(join(dir, "fifo")));
  assert.ok(!readOwnTextNoFollow(join(dir, "fifo")));
  if (process.getuid?.() === 0) {
    const other = join(dir, "other");
    writeFileSync(other, "theirs");
    execFileSync("chown", ["1", other]);
    chmodSync(other, 0o644);
    assert.is(readTextNoFollow(other), "theirs");
    assert.is(readOwnTextNoFollow(other), null, "another user's file is none to readOwnTextNoFollow");
  }
});

test("check prints each verdict padded to its column, and a message's own colons stay", () => {
  const repo = tempRepo();
  succeeded(cli(["lease", "src/a.ts", "--reason", "x: y"], { cwd: repo, agent: "alice" }));
  succeeded(cli(["lease", "lib/**", "--exclusive"], { cwd: repo, agent: "alice" }));
  const r = cli(["check", "src/a.ts", "lib/b.ts", "doc.md"], { cwd: repo, agent: "bob" });
  const lines = r.stdout.split("\n");
  assert.ok(lines.some((l) => /^warn  src\/a\.ts is leased by alice .*; reason: x: y$/.test(l)), r.stdout);
  assert.ok(lines.some((l) => /^deny  lib\/b\.ts is inside an exclusive lease on lib\/\*\* held by alice /.test(l)), r.stdout);
  assert.ok(lines.includes("ok    doc.md"), r.stdout);
});

test.run();
