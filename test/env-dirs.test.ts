// The temp and home folders read from the environment (git/env-dirs.ts) are node:os's answers.
import { homedir, tmpdir } from "node:os";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { homeDirOf, tempDirOf } from "../src/git/env-dirs.ts";

const KEYS = ["TMPDIR", "TMP", "TEMP", "HOME"] as const;

test("tempDirOf and homeDirOf agree with os.tmpdir and os.homedir whatever the environment says", () => {
  const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  const cases: Partial<Record<(typeof KEYS)[number], string>>[] = [
    {},
    { TMPDIR: "/var/tmp/" },
    { TMPDIR: "/" },
    { TMP: "/x/y" },
    { TEMP: "/z//" },
    { TMPDIR: "", TMP: "/from-tmp/" },
    { HOME: "/home/someone" },
    { HOME: "/home/trailing/" },
  ];
  try {
    for (const c of cases) {
      for (const k of KEYS) delete process.env[k];
      Object.assign(process.env, c);
      assert.is(tempDirOf(), tmpdir(), JSON.stringify(c));
      assert.is(homeDirOf(), homedir(), JSON.stringify(c));
    }
  } finally {
    for (const k of KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
});

test.run();
