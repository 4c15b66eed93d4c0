import { fail } from "./errors.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;
/** Longest lease or look-back we accept: a year. Larger values are typos. */
export const MAX_DURATION_MS = 366 * 86_400_000;
const MAX_MS = MAX_DURATION_MS;

/** Parses `90s`, `10m`, `2h`, `1.5h`, `7d`, `500ms` into milliseconds. */
export function parseDuration(text: string, what = "duration"): number {
  const m = DURATION_RE.exec(text.trim());
  if (!m) fail("invalid_input", `invalid ${what} ${JSON.stringify(text)}: use a number and a unit, like 90s, 10m, 2h or 7d`);
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
  if (ms <= 0) fail("invalid_input", `invalid ${what} ${JSON.stringify(text)}: it must be more than zero`);
  if (ms > MAX_MS) fail("invalid_input", `invalid ${what} ${JSON.stringify(text)}: at most 366d`);
  return ms;
}

export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${ms}ms`;
  if (abs < 120_000) return `${Math.round(ms / 1000)}s`;
  if (abs < 7_200_000) return `${Math.round(ms / 60_000)}m`;
  if (abs < 172_800_000) return `${Math.round(ms / 3_600_000)}h`;
  return `${Math.round(ms / 86_400_000)}d`;
}

/**
 * How long ago something happened (`ms` = now - then), for a reader: "just now" under a second,
 * never a negative age. A time in the future can only come from a clock that is ahead: say so.
 */
export function formatAgo(ms: number): string {
  if (ms <= -1000) return "in the future: clock skew?";
  if (ms < 1000) return "just now";
  return `${formatDuration(ms)} ago`;
}

/** When something falls due (`ms` = then - now): "in 30m", "just now", or "3m ago" once past. */
export function formatUntil(ms: number): string {
  if (ms >= 1000) return `in ${formatDuration(ms)}`;
  if (ms > -1000) return "just now";
  return `${formatDuration(-ms)} ago`;
}

/** `--since` takes an ISO time or a duration back from now. */
export function parseSince(text: string, now: Date): Date {
  if (DURATION_RE.test(text.trim())) return new Date(now.getTime() - parseDuration(text, "--since"));
  const t = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(t)) {
    fail("invalid_input", `invalid --since ${JSON.stringify(text)}: use an ISO time (2026-11-29T10:00:00Z) or a duration (2h)`);
  }
  return new Date(t);
}
