// Long-running processes write loose objects into temp files made ahead (temp-files.ts): the
// objects must be exactly git's, the repository must stay fsck-clean with the temp files present,
// nothing may be left behind on close, a temp file pruned before use must not lose the object, and
// concurrent writers of the same objects must all succeed.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ObjectWriter } from "../src/git/object-writer.ts";
import { bundled } from "./support/bundle.ts";
import { cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const objectFile = (repo: string, oid: string) => `${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;

function tempObjects(repo: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(`${repo}/.git/objects`)) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const f of readdirSync(`${repo}/.git/objects/${d}`)) if (f.startsWith("tmp_obj_")) out.push(`${d}/${f}`);
  }
  return out;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("objects written through temp files made ahead are byte for byte what git hash-object -w stores", async () => {
  const ours = tempRepo();
  const theirs = tempRepo();
  const w = new ObjectWriter(`${ours}/.git`, "sha1");
  w.prepareAhead();
  await until(() => tempObjects(ours).length > 0, "temp files made ahead");
  const bodies = ["hello\n", "", "x".repeat(100_000), JSON.stringify({ a: 1 }, null, 2) + "\n"];
  for (const [i, body] of bodies.entries()) {
    const oid = w.write("blob", body);
    writeFileSync(`${theirs}/f${i}`, body);
    assert.is(oid, gitOut(theirs, "hash-object", "-w", `f${i}`));
    assert.equal(inflateSync(readFileSync(objectFile(ours, oid))), inflateSync(readFileSync(objectFile(theirs, oid))), `object ${i} inflates to git's bytes`);
    assert.is(gitOut(ours, "cat-file", "-s", oid), String(Buffer.byteLength(body)));
  }
  const tree = w.write("tree", Buffer.concat([Buffer.from("100644 f\0", "latin1"), Buffer.from(w.write("blob", "hello\n"), "hex")]));
  assert.is(gitOut(ours, "cat-file", "-t", tree), "tree");
  // The temp files waiting for use are git's own kind: fsck passes with them present (the pool
  // refills in the background; under load the writes above may have used it up for a moment).
  await until(() => tempObjects(ours).length > 0, "the pool refilled");
  gitOut(ours, "fsck", "--strict", "--no-dangling");
  w.close();
  // One being made as it closes is removed once made.
  await until(() => tempObjects(ours).length === 0, "closing to remove the temp files not used");
  gitOut(ours, "fsck", "--strict", "--no-dangling");
});

test("a temp file pruned before use does not lose the object; every fan-out folder is made ahead", async () => {
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  w.prepareAhead();
  await until(() => tempObjects(repo).length >= 8, "the pool filled");
  await until(() => readdirSync(`${repo}/.git/objects`).filter((d) => /^[0-9a-f]{2}$/.test(d)).length === 256, "fan-out folders made");
  gitOut(repo, "prune", "--expire=now"); // removes every tmp_obj_* file and the empty fan-out folders
  assert.equal(tempObjects(repo), []);
  const oids = Array.from({ length: 12 }, (_, i) => w.write("blob", `after prune ${i}\n`));
  for (const oid of oids) assert.ok(existsSync(objectFile(repo, oid)), `${oid} written`);
  assert.is(gitOut(repo, "cat-file", "-p", oids[0]!), "after prune 0");
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  w.close();
});

test("writers in several processes writing the same objects at once all succeed", async () => {
  const repo = tempRepo();
  const script = `
    import { ObjectWriter } from ${JSON.stringify(bundled(new URL("../src/git/object-writer.ts", import.meta.url).pathname))};
    const w = new ObjectWriter(process.argv[1], "sha1");
    w.prepareAhead();
    const out = [];
    for (let i = 0; i < 150; i++) { out.push(w.write("blob", "shared " + i + "\\n")); if (i % 10 === 0) await new Promise((r) => setTimeout(r, 1)); }
    w.close();
    process.stdout.write(out.join("\\n"));
  `;
  const run = () =>
    new Promise<string[]>((resolve, reject) => {
      // object-writer.ts bundled: a plain node start, not tsx's (~0.5 CPU-s each).
      const child = spawn(process.execPath, ["--input-type=module", "-e", script, `${repo}/.git`], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (b) => (out += b));
      child.stderr.on("data", (b) => (err += b));
      child.on("close", (code) => (code === 0 ? resolve(out.split("\n")) : reject(new Error(`writer exited ${code}: ${err}`))));
    });
  const results = await Promise.all([run(), run(), run(), run()]);
  for (const r of results) assert.equal(r, results[0]);
  assert.is(results[0]!.length, 150);
  for (const [i, oid] of results[0]!.entries()) assert.is(gitOut(repo, "cat-file", "-p", oid), `shared ${i}`);
  assert.equal(tempObjects(repo), [], "no temp file left by any writer");
  gitOut(repo, "fsck", "--strict", "--no-dangling");
});

test.run();
