// Which remote sync uses, and the settings that came with reading it (timeout, machine, each
// remote's ref prefix): one read of git's config, kept for the calls that follow. Split out of
// remote.ts: every exclusive write asks this, and it needs none of the fetch or push code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ConfigRead } from "./config-read.ts";
import { scanRemoteSettings } from "./config-scan.ts";
import { git } from "./run.ts";
import { notePrefix } from "./ref-prefix.ts";

/** The configured sync remote: `handoff.remote`, else `origin` when it exists; "" disables sync. */
export async function configuredRemote(
  cwd: string,
  commonDir?: string,
  /** git's config files as the caller's opening of the repository reads them (config-read.ts). */
  read?: ConfigRead,
): Promise<{ name: string | null; explicit: boolean; url: string | null }> {
  // Every exclusive write asks this. A repository whose own config names no remote, no handoff
  // setting and no include cannot have a sync remote: answer without spawning git.
  if (commonDir && !mayConfigureRemote(commonDir, read)) return { name: null, explicit: false, url: null };
  // Read from git's files when they are plain (config-scan.ts): `wait`, `sync` and a remote claim
  // otherwise start a `git config` before anything else.
  const stdout =
    (commonDir ? scanRemoteSettings(process.env, commonDir, read) : null) ??
    (await git(["config", "--get-regexp", "^(handoff\\.remote|handoff\\.remotetimeout|handoff\\.machine|remote\\..*\\.(url|handoffrefprefix))$"], { cwd })).stdout;
  const values = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) values.set(line.slice(0, sp).toLowerCase(), line.slice(sp + 1));
    else if (line) values.set(line.toLowerCase(), "");
  }
  // Each remote's handoff ref prefix came with the same read: no second git call for it.
  const prefixes = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const m = /^remote\.(.+)\.(url|handoffrefprefix) ?(.*)$/i.exec(line);
    if (m && (m[2]!.toLowerCase() === "handoffrefprefix" || !prefixes.has(m[1]!))) prefixes.set(m[1]!, m[2]!.toLowerCase() === "handoffrefprefix" ? m[3]! : "");
  }
  for (const [name, prefix] of prefixes) notePrefix(cwd, name, prefix);
  // Settings every remote operation needs next came with the same read: no git call of their own.
  seenSettings.set(cwd, new Map(SEEN_KEYS.map((k) => [k, values.get(k) ?? null])));
  const set = values.get("handoff.remote");
  if (set !== undefined) {
    if (set === "") return { name: null, explicit: true, url: null };
    return { name: set, explicit: true, url: values.get(`remote.${set.toLowerCase()}.url`) ?? null };
  }
  const origin = values.get("remote.origin.url");
  return origin !== undefined ? { name: "origin", explicit: false, url: origin } : { name: null, explicit: false, url: null };
}

const SEEN_KEYS = ["handoff.remotetimeout", "handoff.machine"] as const;
const seenSettings = new Map<string, Map<string, string | null>>();

/** `git config <key>` as configuredRemote last read it for `cwd` (null: unset; undefined: not read). */
export function seenSetting(cwd: string, key: (typeof SEEN_KEYS)[number]): string | null | undefined {
  return seenSettings.get(cwd)?.get(key);
}

function mayConfigureRemote(commonDir: string, read?: ConfigRead): boolean {
  let text: string | null | undefined;
  try {
    text = read ? read.file(`${commonDir}/config`)?.text : readFileSync(join(commonDir, "config"), "utf8");
  } catch {
    return true;
  }
  if (text == null) return true;
  // Asked of the opening's parse where there is one (config-read.ts ConfigRead.plain), else of the text.
  const parsed = read?.plain(`${commonDir}/config`);
  // The sections the pattern finds: the name itself, or followed by a "-" (a parse refuses the includes: the pattern answers).
  const named = (s: string) => ["remote", "handoff", "include", "includeif"].some((w) => s === w || s.startsWith(`${w}-`));
  return parsed ? parsed.sections.some(named) : /^\s*\[\s*(remote|handoff|include|includeif)\b/im.test(text);
}
