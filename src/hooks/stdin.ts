// Hook payloads arrive on stdin. Reading is bounded in size and time: a hook must never hang an
// agent, even when nothing (or far too much) is piped in.
import { fail } from "../core/errors.ts";

export const MAX_PAYLOAD_BYTES = 4 * 1024 * 1024;

export function readStdin(timeoutMs = 5000, maxBytes = MAX_PAYLOAD_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stdin = process.stdin;
    if (stdin.isTTY) return resolve("");
    const done = (err: Error | null) => {
      clearTimeout(timer);
      stdin.removeAllListeners("data");
      stdin.removeAllListeners("end");
      stdin.pause();
      (stdin as unknown as { unref?: () => void }).unref?.();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(() => done(new Error(`no end of input on stdin after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    stdin.on("data", (b: Buffer) => {
      size += b.length;
      if (size > maxBytes) {
        try {
          fail("invalid_input", `hook payload is larger than ${maxBytes} bytes`);
        } catch (e) {
          done(e as Error);
        }
        return;
      }
      chunks.push(b);
    });
    stdin.on("end", () => done(null));
    stdin.on("error", (e) => done(e));
  });
}

/** Parses a JSON object payload, or fails with invalid_input naming the problem. */
export function parsePayload(text: string, hook: string): Record<string, unknown> {
  if (!text.trim()) fail("invalid_input", `${hook}: empty payload on stdin (expected the agent's JSON)`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    fail("invalid_input", `${hook}: payload is not valid JSON (${(e as Error).message.split("\n")[0]})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail("invalid_input", `${hook}: payload is not a JSON object`);
  return v as Record<string, unknown>;
}
