// Ctrl-C on a verb that runs until stopped (work/interrupts.ts): the first stops it cleanly, a
// repeat within SAME_INTERRUPT_MS is the same Ctrl-C (git passes its own copy on to its dashed
// external), a later one quits at once. The copy can arrive after the verb's cleanup has closed its
// handlers, on its way out: it must not kill the process then, before the status it set (130) and
// its exit handlers run. ctrl-c-through-git.test.ts met that on a loaded machine (git's copy held
// until the cleanup ended): the wait's exit status was lost.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bundled } from "./support/bundle.ts";
import { cleanEnv, cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

const MODULE = resolve(import.meta.dirname, "../src/work/interrupts.ts");

/** Runs `body` (JavaScript, with `catchInterrupts`, `sleep` and `out` in scope) as its own process, on interrupts.ts bundled. */
function runScript(body: string): { status: number | null; signal: NodeJS.Signals | null; stdout: string } {
  const file = join(tempDir(), "script.mjs");
  writeFileSync(
    file,
    `import { catchInterrupts } from ${JSON.stringify(bundled(MODULE))};\nconst sleep = (ms) => new Promise((r) => setTimeout(r, ms));\nconst out = (s) => process.stdout.write(s + "\\n");\n${body}\n`,
  );
  const r = spawnSync(process.execPath, [file], { env: cleanEnv(), encoding: "utf8", timeout: 20_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout };
}

test("the same Ctrl-C's copy arriving after the cleanup closed the handlers: the process still ends with its own status", () => {
  const r = runScript(`
const stop = catchInterrupts(() => out("stopping"));
process.kill(process.pid, "SIGINT");
await sleep(100);
out(stop.interrupted ? "interrupted" : "not interrupted");
stop.close();
process.on("exit", () => out("exit handlers ran"));
process.exitCode = 130;
process.kill(process.pid, "SIGINT");
await sleep(100);
out("cleaned up");
`);
  assert.is(r.signal, null, `killed by ${r.signal}; said: ${r.stdout}`);
  assert.is(r.status, 130);
  assert.is(r.stdout, "stopping\ninterrupted\ncleaned up\nexit handlers ran\n");
});

test("closed without an interrupt, the handlers are gone: Ctrl-C is the default again", () => {
  const r = runScript(`
const stop = catchInterrupts();
stop.close();
out(String(process.listenerCount("SIGINT") + process.listenerCount("SIGTERM") + process.listenerCount("SIGHUP")));
process.kill(process.pid, "SIGINT");
await sleep(2000);
out("still here");
`);
  assert.is(r.stdout, "0\n");
  assert.is(r.signal, "SIGINT");
});

test("a second Ctrl-C after the same-Ctrl-C window quits at once with 130, closed or not", () => {
  const r = runScript(`
const stop = catchInterrupts();
process.kill(process.pid, "SIGINT");
await sleep(1200);
stop.close();
process.kill(process.pid, "SIGINT");
await sleep(2000);
out("still here");
`);
  assert.is(r.status, 130);
  assert.is(r.stdout, "");
});

test.run();
