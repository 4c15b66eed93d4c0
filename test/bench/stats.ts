// Small measuring helpers shared by the benchmarks: interleaved runs, medians, ratios.
import { spawnSync } from "node:child_process";

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Wall time of one process run, in milliseconds. */
export function timeProcess(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, input: opts.input ?? "", stdio: ["pipe", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/**
 * Runs `a` and `b` alternately `rounds` times (so machine noise hits both alike) and returns
 * their medians and the ratio b/a.
 */
export function interleave(rounds: number, a: (i: number) => number, b: (i: number) => number): { a: number; b: number; ratio: number } {
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    as.push(a(i));
    bs.push(b(i));
  }
  const ma = median(as);
  const mb = median(bs);
  return { a: ma, b: mb, ratio: mb / ma };
}

export function fmt(x: number, digits = 2): string {
  return x.toFixed(digits);
}
