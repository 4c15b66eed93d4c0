// The in-process object writer must produce objects git itself reads back, and leave nothing
// half-written behind.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ObjectReader } from "../src/git/object-reader.ts";
import { ObjectWriter, wantsObjectFsync } from "../src/git/object-writer.ts";
import { cleanupTemp, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("objects written in-process are what git hashes and reads", async () => {
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  const blob = w.write("blob", "hello\n");
  writeFileSync(`${repo}/h.txt`, "hello\n");
  assert.is(blob, gitOut(repo, "hash-object", "h.txt"));
  assert.is(gitOut(repo, "cat-file", "-p", blob), "hello");
  assert.is(w.write("blob", "hello\n"), blob, "writing the same object twice is harmless");
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  const fanout = readdirSync(`${repo}/.git/objects/${blob.slice(0, 2)}`);
  assert.ok(!fanout.some((f) => f.startsWith("tmp_obj_")), "no temp file left behind");
  const r = new ObjectReader(`${repo}/.git`, repo);
  assert.is((await r.read(blob))?.data.toString(), "hello\n");
  assert.is(await r.read("0".repeat(40)), null);
  r.close();
});

test("a large tree is stored uncompressed and a large blob compressed, both read back by git and by the reader", async () => {
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  const blob = w.write("blob", "x\n");
  // A thousand entries (~35 KB): past the small objects' size and the WebAssembly hash's.
  const names = Array.from({ length: 1000 }, (_, i) => `area${i}.json`).sort();
  const body = Buffer.concat(names.flatMap((n) => [Buffer.from(`100644 ${n}\0`, "latin1"), Buffer.from(blob, "hex")]));
  const tree = w.write("tree", body);
  const text = "some text that compresses well\n".repeat(2000);
  const big = w.write("blob", text);
  const stored = (oid: string) => {
    const file = readFileSync(`${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
    return file.length > (oid === tree ? body.length : text.length);
  };
  assert.ok(stored(tree), "the tree's file holds it uncompressed");
  assert.not.ok(stored(big), "the text blob is compressed");
  assert.is(gitOut(repo, "ls-tree", tree).split("\n").length, 1000);
  assert.is(gitOut(repo, "cat-file", "-s", big), String(text.length));
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  const r = new ObjectReader(`${repo}/.git`, repo);
  assert.ok((await r.read(tree))?.data.equals(body), "the reader reads the tree back");
  assert.is((await r.read(big))?.data.toString(), text);
  r.close();
});

test("a long-running writer (temp files made ahead, node:crypto's digest) names its objects as git does", () => {
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  w.prepareAhead();
  try {
    const blob = w.write("blob", "hello\n");
    writeFileSync(`${repo}/h.txt`, "hello\n");
    assert.is(blob, gitOut(repo, "hash-object", "h.txt"));
    const tree = w.write("tree", Buffer.concat([Buffer.from("100644 h.txt\0", "latin1"), Buffer.from(blob, "hex")]));
    gitOut(repo, "add", "h.txt");
    assert.is(tree, gitOut(repo, "write-tree"));
    gitOut(repo, "fsck", "--strict", "--no-dangling");
  } finally {
    w.close();
  }
});

test("sha256 repositories get sha256 object ids", () => {
  const dir = tempDir();
  gitOut(dir, "init", "-q", "--object-format=sha256");
  const w = new ObjectWriter(`${dir}/.git`, "sha256");
  const oid = w.write("blob", "x");
  assert.is(oid.length, 64);
  assert.is(gitOut(dir, "cat-file", "-t", oid), "blob");
});

test("objects are fsynced only when the repository asks git to", () => {
  const dir = tempDir();
  gitOut(dir, "init", "-q");
  assert.is(wantsObjectFsync(`${dir}/.git`), false);
  gitOut(dir, "config", "core.fsyncObjectFiles", "true");
  assert.is(wantsObjectFsync(`${dir}/.git`), true);
  gitOut(dir, "config", "--unset", "core.fsyncObjectFiles");
  gitOut(dir, "config", "core.fsync", "reference,loose-object");
  assert.is(wantsObjectFsync(`${dir}/.git`), true);
  gitOut(dir, "config", "core.fsync", "reference");
  assert.is(wantsObjectFsync(`${dir}/.git`), false);
});

test.run();
