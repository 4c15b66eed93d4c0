// An opening reads git's config files through what the last one kept (.git/handoff/config-read.cache,
// config-memo.ts): a file whose stamp is the kept one is neither read nor parsed again. Each test
// plants a memo whose text differs from the file's under the file's own stamp, so which one an
// opening took shows, then changes the file (or what names it) and sees the file read anew.
import { chownSync, readFileSync, renameSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CONFIG_MEMO } from "../src/git/config-memo.ts";
import { ConfigRead, parseFile } from "../src/git/config-read.ts";
import { fileStamp } from "../src/git/file-stamp.ts";
import { discoverRepo } from "../src/git/repo.ts";
import { editPayload } from "./bench/lease-fixture.ts";
import { runHook } from "./support/hook-runner.ts";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const PLANTED = "[extensions]\n\tobjectformat = sha256\n";

/** Sets a file's times a minute back: older than the two seconds within which nothing is kept. */
function age(path: string): void {
  const t = new Date(Date.now() - 60_000);
  utimesSync(path, t, t);
}

/** A memo holding `text` for `path` under the file's stamp as it is now (v: the memo's version). */
function plant(commonDir: string, path: string, text = PLANTED, v = 2): void {
  const parsed = { "": parseFile(text, null) };
  writeFileSync(`${commonDir}/${CONFIG_MEMO}`, JSON.stringify({ v, files: [[path, { stamp: fileStamp(path), text, parsed }]] }));
}

/** What a fresh opening's read (through the memo of `commonDir`) takes `path` to say. */
function seen(commonDir: string, path: string): { text: string | null | undefined; keys: string[] | undefined } {
  const read = new ConfigRead();
  read.useMemo(commonDir);
  return { text: read.file(path)?.text, keys: read.entries(path, null)?.entries.map((e) => `${e.section}.${e.key}`) };
}

function setup(): { repo: string; common: string; config: string; real: string } {
  const repo = tempRepo();
  const common = `${repo}/.git`;
  const config = `${common}/config`;
  age(config);
  // The folder the memo lives in, as the first hook leaves it.
  gitOut(repo, "config", "--get", "core.bare");
  const read = new ConfigRead();
  read.useMemo(common);
  read.entries(config, null);
  read.saveMemo();
  return { repo, common, config, real: readFileSync(config, "utf8") };
}

test("an opening keeps the files it read and parsed; the next takes a file whose stamp is the kept one from there", () => {
  const { common, config, real } = setup();
  const kept = JSON.parse(readFileSync(`${common}/${CONFIG_MEMO}`, "utf8"));
  assert.equal(kept.files[0][0], config);
  assert.is(kept.files[0][1].text, real);
  plant(common, config);
  assert.equal(seen(common, config), { text: PLANTED, keys: ["extensions.objectformat"] });
});

test("a file rewritten in place, at its size and with its times put back, is read anew (its change time moved)", () => {
  const { common, config, real } = setup();
  plant(common, config);
  writeFileSync(config, real);
  age(config);
  assert.is(seen(common, config).text, real);
});

test("a file replaced by rename, the same text and times, is read anew (a new inode)", () => {
  const { common, config, real } = setup();
  plant(common, config);
  writeFileSync(`${config}.new`, real);
  age(`${config}.new`);
  renameSync(`${config}.new`, config);
  assert.is(seen(common, config).text, real);
});

test("a file changed by git config is read anew, and a file removed is none", () => {
  const { repo, common, config } = setup();
  plant(common, config);
  gitOut(repo, "config", "handoff.remote", "hub");
  assert.ok(seen(common, config).keys?.includes("handoff.remote"));
  plant(common, config);
  unlinkSync(config);
  assert.equal(seen(common, config), { text: null, keys: undefined });
});

test("a file changed in the last two seconds is not kept, and the others are", () => {
  const { common, config } = setup();
  const other = `${tempDir()}/gitconfig`;
  writeFileSync(other, "[core]\n\tfsync = all\n");
  writeFileSync(config, readFileSync(config)); // now
  const read = new ConfigRead();
  read.useMemo(common);
  read.entries(config, null);
  age(other);
  read.entries(other, null);
  read.saveMemo();
  const kept = JSON.parse(readFileSync(`${common}/${CONFIG_MEMO}`, "utf8")).files.map((f: [string]) => f[0]);
  assert.equal(kept, [other]);
});

test("each file is kept by its own path: another global file (HOME, GIT_CONFIG_GLOBAL) is read, not the kept one", () => {
  const { common } = setup();
  const [a, b] = [tempDir(), tempDir()];
  for (const home of [a, b]) writeFileSync(`${home}/.gitconfig`, `[user]\n\tname = ${home}\n`);
  age(`${a}/.gitconfig`);
  plant(common, `${a}/.gitconfig`);
  assert.is(seen(common, `${a}/.gitconfig`).text, PLANTED);
  assert.is(seen(common, `${b}/.gitconfig`).text, `[user]\n\tname = ${b}\n`);
});

test("a file over 32 KB is not kept: read and parsed each time, as before", () => {
  const { common, config } = setup();
  const big = `${tempDir()}/gitconfig`;
  writeFileSync(big, `[user]\n${"\t# a comment line of the kind a large config file holds\n".repeat(700)}\tname = big\n`);
  age(big);
  const read = new ConfigRead();
  read.useMemo(common);
  read.entries(config, null);
  read.entries(big, null);
  read.saveMemo();
  const kept = JSON.parse(readFileSync(`${common}/${CONFIG_MEMO}`, "utf8")).files.map((f: [string]) => f[0]);
  assert.equal(kept, [config]);
  // Read again by the next opening, it leaves the memo as it was: no write at every edit.
  const ino = statSync(`${common}/${CONFIG_MEMO}`).ino;
  const again = new ConfigRead();
  again.useMemo(common);
  again.entries(config, null);
  again.entries(big, null);
  again.saveMemo();
  assert.is(statSync(`${common}/${CONFIG_MEMO}`).ino, ino);
});

test("the memo keeps at most sixteen files, those asked last", () => {
  const { common, config } = setup();
  const dir = tempDir();
  const files = Array.from({ length: 20 }, (_, i) => `${dir}/config${i}`);
  for (const f of files) {
    writeFileSync(f, `[core]\n\tbare = false\n`);
    age(f);
    const read = new ConfigRead();
    read.useMemo(common);
    read.entries(f, null);
    read.saveMemo();
  }
  const kept = JSON.parse(readFileSync(`${common}/${CONFIG_MEMO}`, "utf8")).files.map((f: [string]) => f[0]);
  assert.equal(kept, files.slice(4));
  assert.not.ok(kept.includes(config));
});

test("another version's memo, one not as written, and a link in its place are read as none", () => {
  const { common, config, real } = setup();
  plant(common, config, PLANTED, 1);
  assert.is(seen(common, config).text, real);
  plant(common, config, PLANTED, 3);
  assert.is(seen(common, config).text, real);
  plant(common, config);
  const memo = `${common}/${CONFIG_MEMO}`;
  const planted = JSON.parse(readFileSync(memo, "utf8"));
  planted.files[0][1].parsed[""].entries[0].key = 7;
  writeFileSync(memo, JSON.stringify(planted));
  assert.is(seen(common, config).text, real);
  plant(common, config);
  renameSync(memo, `${common}/elsewhere.json`);
  symlinkSync(`${common}/elsewhere.json`, memo);
  assert.is(seen(common, config).text, real);
});

test("the memo, which holds this user's global config, is this user's alone: written for its owner only, another's read as none", () => {
  const { common, config, real } = setup();
  const memo = `${common}/${CONFIG_MEMO}`;
  assert.is(statSync(memo).mode & 0o777, 0o600);
  plant(common, config);
  assert.is(seen(common, config).text, PLANTED);
  if (process.getuid?.() !== 0) return; // only root gives a file away
  chownSync(memo, 4242, 4242);
  assert.is(seen(common, config).text, real);
});

test("discovery reads through the memo, and the pre-edit hook leaves one after its answer", () => {
  const repo = tempRepo();
  const config = `${repo}/.git/config`;
  age(config);
  const r = runHook("claude-pre-tool-use", { cwd: repo, agent: "a", input: editPayload(repo, "src/a.ts") });
  assert.is(r.code, 0, r.stderr);
  const kept = JSON.parse(readFileSync(`${repo}/.git/${CONFIG_MEMO}`, "utf8")).files.map((f: [string]) => f[0]);
  assert.ok(kept.includes(config), kept.join(" "));
  assert.is(discoverRepo(repo).objectFormat, "sha1");
  plant(`${repo}/.git`, config);
  assert.is(discoverRepo(repo).objectFormat, "sha256", "the planted text was read");
  gitOut(repo, "config", "core.fsync", "none");
  assert.is(discoverRepo(repo).objectFormat, "sha1", "the changed file was read");
});

test("a one-shot command leaves the memo after its answer too, and the next one, finding the files as kept, writes nothing", () => {
  const repo = tempRepo();
  const config = `${repo}/.git/config`;
  age(config);
  const first = cli(["task", "list"], { cwd: repo, agent: "a" });
  assert.is(first.code, 0, first.stderr);
  const memo = `${repo}/.git/${CONFIG_MEMO}`;
  const kept = JSON.parse(readFileSync(memo, "utf8")).files.map((f: [string]) => f[0]);
  assert.ok(kept.includes(config), kept.join(" "));
  const before = statSync(memo, { bigint: true });
  assert.is(cli(["task", "list"], { cwd: repo, agent: "a" }).code, 0);
  const after = statSync(memo, { bigint: true });
  assert.equal([after.ino, after.mtimeNs], [before.ino, before.mtimeNs], "rewritten by a command that read nothing new");
});


test("a stamp tells apart modification times within one millisecond, as the nanoseconds did", () => {
  const dir = tempDir();
  const path = `${dir}/config`;
  writeFileSync(path, "[core]\n");
  const mtimeOf = (at: number) => {
    utimesSync(path, at, at);
    return fileStamp(path).split(":")[2];
  };
  // 100 us apart, in one millisecond (seconds, as utimes takes them).
  const at = Math.floor(Date.now() / 1000) - 60;
  assert.is.not(mtimeOf(at + 0.0001), mtimeOf(at + 0.0002));
});

test.run();
