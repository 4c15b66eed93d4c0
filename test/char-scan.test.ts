// The character tests written as loops (core/char-scan.ts) answer as the patterns they replace,
// over strings built from the characters each pattern turns on; `check` prints its verdicts in
// their column as before; and the cache readers that no longer go through readFileSync on a
// descriptor (git/safe-file.ts) read as before.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, posix } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hasControlChar, hasDotDotSegment, hasExtglob, hasUnsafeChar, isIdText, isObjectIdText, isPlainShellWord, isWordText, loopFirst, startsWithDrive } from "../src/core/char-scan.ts";
import { neutralise } from "../src/present/untrusted.ts";
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
  ["isIdText", isIdText, /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/, ["a", "Z", "0", "9", ".", "_", "@", "+", "-", "/", " ", "é"]],
  ["isPlainShellWord", isPlainShellWord, /^[A-Za-z0-9_@%+=:./-][A-Za-z0-9_@%+=:./#-]*$/, ["a", "Z", "0", "_", "@", "%", "+", "=", ":", ".", "/", "-", "#", "'", " ", "$"]],
  [
    "hasUnsafeChar",
    hasUnsafeChar,
    /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/,
    ["a", "\x00", "\x08", "\t", "\n", "\x0b", "\x1f", " ", "\x7e", "\x7f", "\x9f", "\xa0", "\u061b", "\u061c", "\u061d", "\u200d", "\u200e", "\u200f", "\u2010", "\u202a", "\u202e", "\u202f", "\u2065", "\u2066", "\u2069", "\u206a"],
  ],
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

test("hasUnsafeChar answers as its pattern for every character of the first plane", () => {
  const pattern = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
  for (let c = 0; c <= 0xffff; c++) {
    const s = `a${String.fromCharCode(c)}b`;
    assert.is(hasUnsafeChar(s), pattern.test(s), `U+${c.toString(16)}`);
  }
});

test("isObjectIdText answers as /^[0-9a-f]{40,64}$/ at every length around the ids' and with any character in any place", () => {
  const pattern = /^[0-9a-f]{40,64}$/;
  const hex = "0123456789abcdef";
  let n = 0;
  for (let len = 0; len <= 70; len++) {
    const s = Array.from({ length: len }, (_, i) => hex[(i * 7) % 16]).join("");
    assert.is(isObjectIdText(s), pattern.test(s), `length ${len}`);
    for (const c of ["0", "9", "a", "f", "g", "A", "F", "/", ":", "`", "@", " ", "\n", "é"]) {
      for (const at of [0, Math.floor(len / 2), len - 1]) {
        if (at < 0) continue;
        const t = s.slice(0, at) + c + s.slice(at + 1);
        assert.is(isObjectIdText(t), pattern.test(t), JSON.stringify(t));
        n++;
      }
    }
  }
  assert.ok(n > 2000);
});

test("loopFirst asks the loop the first questions and the pattern after them; neutralise answers alike in both", () => {
  const asked: string[] = [];
  const test2 = loopFirst((s) => (asked.push(s), true), /^never$/, 3);
  assert.equal(["a", "b", "c", "d", "e"].map(test2), [true, true, true, false, false]);
  assert.equal(asked, ["a", "b", "c"]);
  const long: string[] = [];
  const test3 = loopFirst((s) => (long.push(s), true), /^never$/, 3, 4);
  assert.equal(["abcde", "abcd", "x".repeat(2000)].map(test3), [false, true, false]);
  assert.equal(long, ["abcd"]);
  const unsafe = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  const visible = (c: string) => (c.charCodeAt(0) <= 0xff ? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  for (let i = 0; i < 40; i++) {
    const text = i % 3 ? `plain text ${i}\twith a tab` : `text ${i} \x1b[31m red \u202e reversed \x7f`;
    assert.is(neutralise(text), text.replace(unsafe, visible), `call ${i}`);
  }
});

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
