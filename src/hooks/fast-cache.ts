// What the sh fast path (git-hooks/fast-hook.sh) reads: one file per agent and worktree,
// `<git-dir>/handoff/fast-hook/<key>`, compiled by the full hook from the parsed lease set (never
// from the stored format). It holds only what a "no objection" answer must be proved against:
// the values it is valid for (the refs the lease set, the policy and the caller's declaration
// come from, and the policy files' text), the mode, when the caller's next write falls due, a
// superset test for each lease of another agent that still stands (live, or inside the takeover
// grace), and the patterns the caller provably holds or declared. Anything the fast path cannot
// read exactly makes it start the full hook.
import { existsSync, readFileSync } from "node:fs";
import { braceExpand } from "minimatch";
import { globSource, isGlob, MAX_PATTERN_ALTERNATIVES } from "../core/paths.ts";
import { literalPrefix } from "../core/glob-overlap.ts";
import type { Lease } from "../core/lease.ts";
import { holderSuggestions } from "../core/lease-ops.ts";
import { neutralise } from "../present/untrusted.ts";
import { configuredRemote } from "../git/configured-remote.ts";
import { git } from "../git/run.ts";
import { loadRepositoryConfig } from "../store/repo-policy.ts";
import { LEASES_REF, loadPolicy, readLeasesAt } from "../store/lease-store.ts";
import { readSmallFile, writeSmallFile } from "../store/small-file.ts";
import { defaultAgentName, isStoreRef, type Store } from "../store/store.ts";
import { declaredPatterns } from "./fast-declaration.ts";
import { quarantineRef } from "../sync/quarantine.ts";
import { thisHost } from "../git/host-name.ts";
import { clockFilePath } from "../sync/skew.ts";
import { staleLeaseNote } from "../store/stale-leases.ts";

export const FAST_CACHE_VERSION = "git-handoff fast-hook 4";

/**
 * Release requests and their answers reach an agent in its next full hook answer, and they arrive
 * on other agents' log refs, which the cache is not keyed by (one value per agent would cost the
 * fast path a read per agent). So a cache answers edits for this long after it was compiled and
 * then hands one edit to the full hook, which delivers what is waiting and compiles it again.
 */
export const DELIVERY_BOUND_MS = 30_000;
const SAFE_NAME = /^[A-Za-z0-9._@+-]{1,200}$/;
/** Characters that can make a glob match something other than themselves. */
const MAGIC = /[*?[\]{}()!+@\\]/;

/** The cache file's name for the calling agent, or null when the fast path cannot name it. */
export function fastCacheKey(store: Store, env: NodeJS.ProcessEnv = process.env): string | null {
  const agent = store.actor.agent;
  if (env.HANDOFF_AGENT) return env.HANDOFF_AGENT === agent && SAFE_NAME.test(agent) ? `a.${agent}` : null;
  // The default name comes from $USER, the host name and the worktree: the fast path checks all three.
  const user = env.USER;
  if (!user || !SAFE_NAME.test(user) || agent !== defaultAgentName(store.repo, env)) return null;
  return `u.${user}`;
}

export function fastCachePath(store: Store, key: string): string {
  return `${store.repo.gitDir}/handoff/fast-hook/${key}`;
}

/**
 * What the cache is valid for, as names `git cat-file --batch-check` resolves: the lease ref, the
 * caller's agent ref (its declared session files), the sync remote's list of refs held back, and the policy committed on the integration
 * branch (the file's blob, so commits that leave it alone change nothing; the branch tip too
 * while it has none, as a later commit may add one).
 */
export async function keyNames(store: Store): Promise<string[]> {
  const names = [LEASES_REF, `refs/handoff/agents/${store.actor.agent}`];
  // The refs held back from the sync remote: a lease set held back as newer arrives there, not on
  // the lease ref, and the local lease set may then be stale (no cache is compiled meanwhile).
  const sync = await store.syncRemote();
  if (sync) names.push(quarantineRef(sync));
  const branch = store.config.integrationBranch;
  if (branch) {
    names.push(`refs/heads/${branch}:.handoff.yaml`);
    if ((await tipsLine(store, names.slice(-1))).endsWith(" missing")) names.push(`refs/heads/${branch}`);
  } else {
    // No integration branch yet: the policy is looked up again on every run; any of these appearing changes it.
    names.push("refs/heads/main", "refs/heads/master");
    const remote = (await configuredRemote(store.cwd, store.repo.commonDir)).name;
    if (remote) names.push(`refs/remotes/${remote}/HEAD`);
  }
  return names;
}

/** What `git cat-file --batch-check=%(objectname)` prints for the names, one line each, joined by spaces. */
/**
 * The refs behind the names, read in process: when they have not moved the names resolve as they
 * did, and the full hook need not start git to know its cache still holds.
 */
async function rawRefs(store: Store, names: string[]): Promise<string> {
  const out: string[] = [];
  for (const n of names) out.push((await store.readRef(n.split(":")[0]!)) ?? "-");
  return out.join(" ");
}

/**
 * With a separate store the coordination refs resolve there and the rest (branches) here, the
 * store's first: the shell hook (git-hooks/fast-hook.sh) asks in the same order.
 */
async function tipsLine(store: Store, names: string[]): Promise<string> {
  const groups = store.separateStore ? [{ cwd: store.storeCwd, names: names.filter(isStoreRef) }, { cwd: store.cwd, names: names.filter((n) => !isStoreRef(n)) }] : [{ cwd: store.cwd, names }];
  const out: string[] = [];
  for (const g of groups) {
    if (!g.names.length) continue;
    const r = await git(["cat-file", "--batch-check=%(objectname)"], { cwd: g.cwd, input: g.names.join("\n") + "\n" });
    if (r.code !== 0) throw new Error("git cat-file --batch-check failed");
    out.push(...r.stdout.trim().split("\n"));
  }
  return out.join(" ");
}

function fileLines(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "latin1");
  } catch {
    return [`file\t${path}\t-`];
  }
  // Read back by awk line by line: a trailing newline makes no line of its own.
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  if (lines.some((l) => l.includes("\0"))) return [`file\t${path}\t?`]; // never valid: forces the full hook
  return [`file\t${path}\t${lines.length}`, ...lines.map((l) => `|${l}`)];
}

/** A test that every path the pattern can match passes (prefix and suffix), or `U`: anything may. */
export function supersetTest(pattern: string): [kind: "E" | "G" | "U", a: string, b: string] {
  if (!isGlob(pattern) && !pattern.includes("\\")) return ["E", pattern, ""];
  if (pattern.includes("\\") || pattern.includes("\t") || pattern.includes("\n") || oddSegments(pattern)) return ["U", "", ""];
  let last = -1;
  for (let i = 0; i < pattern.length; i++) if (MAGIC.test(pattern[i]!)) last = i;
  // `**/` may match no folder at all: the suffix is required without its leading slashes.
  const suffix = pattern.slice(last + 1).replace(/^\/+/, "");
  return ["G", literalPrefix(pattern), suffix];
}

/**
 * Whether a glob spells a segment `.`, `..` or an empty one, itself or in one of its `{a,b}`
 * alternatives. minimatch reads `x/..` as nothing and `//` as `/` (`lib/?/../b.ts` matches
 * lib/b.ts), so the literal tail of such a pattern says nothing of its matches. A lease made here
 * never has one (normalizeRepoPath), one received from another clone may.
 */
function oddSegments(pattern: string): boolean {
  const alternatives = pattern.includes("{") ? braceExpand(globSource(pattern), { braceExpandMax: MAX_PATTERN_ALTERNATIVES + 1 }) : [pattern];
  return alternatives.length > MAX_PATTERN_ALTERNATIVES || alternatives.some((a) => a.split("/").some((s) => s === "" || s === "." || s === ".."));
}

/**
 * A pattern whose matches the fast path can decide exactly, or null: a literal (`E`), a folder
 * (`D`: `prefix/**`, any path below the prefix) or a name in a folder tree (`N`: `prefix/**\/name`).
 */
export function exactTest(pattern: string): [kind: "E" | "D" | "N", a: string, b: string] | null {
  if (pattern.includes("\t") || pattern.includes("\n") || pattern.includes("\\")) return null;
  if (!isGlob(pattern)) return ["E", pattern, ""];
  const prefix = literalPrefix(pattern);
  const rest = pattern.slice(prefix.length);
  if (rest === "**") return ["D", prefix, ""];
  if (rest.startsWith("**/") && !isGlob(rest.slice(3)) && !rest.slice(3).includes("/")) return ["N", prefix, rest.slice(3)];
  return null;
}

const ms = (iso: string) => Date.parse(iso);

/** A text as it stands inside a JSON string of an answer: escaped for terminals, then for JSON. */
const jsonPiece = (s: string) => JSON.stringify(neutralise(s)).slice(1, -1);

const ELSEWHERE = "work on another file or task; see who holds what: git handoff leases";

/**
 * What a deny, warn or info answer naming lease `l` needs besides the path and the time left
 * (check.ts describe, lease-ops.ts holderSuggestions), as JSON string pieces: the exact test of
 * its pattern, then agent, holder ("agent (task t)"), pattern, expiry, reason clause and the
 * negotiate suggestion. `-` when the fast path cannot say it exactly (a pattern it cannot decide,
 * a text with a line break, suggestions of another shape): then only the full hook answers.
 */
export function answerPieces(l: Lease, now: number): string[] {
  const exact = exactTest(l.pattern);
  const s = holderSuggestions(l, new Date(now));
  const pieces = [l.agent, `${l.agent}${l.task ? ` (task ${l.task})` : ""}`, l.pattern, l.expires_at, l.reason ? `; reason: ${l.reason}` : "", s[1]?.detail ?? ""];
  const shaped =
    s.length === 3 &&
    s[0]!.action === "wait" &&
    s[0]!.detail.startsWith(`wait until ${l.agent} releases it or the lease expires at ${l.expires_at} (`) &&
    s[1]!.action === "negotiate" &&
    s[2]!.action === "work_elsewhere" &&
    s[2]!.detail === ELSEWHERE;
  if (!exact || !shaped || pieces.some((p) => p.includes("\n"))) return ["-"];
  return [...exact, ...pieces.map(jsonPiece)];
}

/** The cache text for the caller as things stand, or null when the fast path must not answer at all. */
export async function compileFastCache(store: Store, env: NodeJS.ProcessEnv = process.env): Promise<{ key: string; text: string } | null> {
  const key = fastCacheKey(store, env);
  const root = store.repo.workTree;
  if (!key || !root) return null;
  const agent = store.actor.agent;
  // With a sync remote the takeover grace comes from max_clock_skew and this clock's offset on
  // file: the clock file is copied like a policy file, so a new estimate means a stale cache.
  const sync = await store.syncRemote();
  const files = [`${root}/.handoff.yaml`, `${root}/.gitattributes`, `${store.repo.commonDir}/config`, ...(sync ? [clockFilePath(store, sync)] : [])];
  const before = files.flatMap(fileLines);
  // Read again after the files: a policy changed meanwhile is seen as a changed file next time.
  const { config } = await loadRepositoryConfig(store.repo);
  if (store.policySource?.fallback) return null; // a policy that does not parse: only the full hook says so
  if (await staleLeaseNote(store)) return null; // the lease set may be stale: only the full hook says so
  const refs = await keyNames(store);
  const raw = await rawRefs(store, refs);
  const tips = await tipsLine(store, refs);
  const tip = await store.readRef(LEASES_REF);
  const { set } = await readLeasesAt(store, tip);
  const now = store.now().getTime();
  const grace = await store.takeoverGrace();
  if (raw !== (await rawRefs(store, refs)) || tips !== (await tipsLine(store, refs)) || files.flatMap(fileLines).join("\n") !== before.join("\n")) return null;

  const lines = [FAST_CACHE_VERSION, `agent\t${agent}`, `refs\t${refs.join(" ")}`, `tips\t${tips}`, `worktree\t${root}`, `gitdir\t${store.repo.gitDir}`];
  // The host as the fast path reads it (/proc/sys/kernel/hostname), without loading node:os.
  if (key.startsWith("u.")) lines.push(`user\t${env.USER}`, `host\t${thisHost()}`);
  // A case-insensitive file system resolves SRC/a.ts to src/a.ts: only the full hook sees that.
  const casefold = existsSync(`${root}/.GIT`) ? 1 : 0;
  lines.push(...before, `casefold\t${casefold}`, `mode\t${config.mode}`, `autolease\t${config.autoLease ? 1 : 0}`);
  let due = Infinity;
  let floor = 0;
  const others: string[] = [];
  const mine: string[] = [];
  for (const l of set.leases) {
    const live = ms(l.expires_at) > now;
    if (l.agent !== agent) {
      // Another agent's lease stands for the grace past its expiry (check.ts): one that still
      // stands is listed with its own expiry, and the fast path hands a path it covers within the
      // grace to the full hook rather than word that answer itself. The grace lasts max_clock_skew
      // (a minute by default) past an expiry, so that costs little, and the text stays the full
      // hook's alone. One that no longer stands keeps a clock set back from answering.
      if (ms(l.expires_at) + grace <= now) floor = Math.max(floor, ms(l.expires_at) + grace);
      else others.push(["L", l.exclusive ? "x" : "s", ms(l.expires_at), ...supersetTest(l.pattern), ...answerPieces(l, now)].join("\t"));
      continue;
    }
    if (!live) continue;
    // Renewal (leases of no task) and claim extension (a task's leases) are both due two thirds before expiry.
    due = Math.min(due, ms(l.expires_at) - (l.ttl_ms * 2) / 3);
    const t = exactTest(l.pattern);
    if (t) mine.push(["M", ms(l.expires_at), ...t].join("\t"));
  }
  if (!Number.isFinite(floor)) return null;
  const declared = await declaredPatterns(store, set.leases, now);
  lines.push(`due\t${Number.isFinite(due) ? Math.floor(due) : "-"}`, `floor\t${floor}`, `declared\t${declared.length ? 1 : 0}`, `deliver\t${now + DELIVERY_BOUND_MS}`, `grace\t${grace}`);
  for (const p of declared) {
    const t = exactTest(p);
    if (t) lines.push(["D", ...t].join("\t"));
  }
  // The paths the policy ignores (never leased or checked): a path one may cover is answered by the full hook.
  const ignored = loadPolicy(store).ignore.map((g) => ["I", ...supersetTest(g)].join("\t"));
  lines.push(...others, ...mine, ...ignored, `raw\t${raw}`, "end", "");
  return { key, text: lines.join("\n") };
}

/**
 * Rewrites the caller's cache when it no longer holds the current values. Best effort, after the
 * answer: a cache that cannot be written only means the next edit takes the full hook too.
 */
export async function refreshFastCache(store: Store, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (env.HANDOFF_FAST_HOOK === "0") return;
  try {
    const key = fastCacheKey(store, env);
    if (!key || !store.repo.workTree) return;
    const path = fastCachePath(store, key);
    const current = readSmallFile(path);
    // A cache an older git-handoff wrote is compiled again at once, whatever it is keyed by.
    if (current?.startsWith(`${FAST_CACHE_VERSION}\n`)) {
      const tipsAt = current.indexOf("\ntips\t");
      const refs = /\nrefs\t(.*)\n/.exec(current)?.[1];
      if (refs && tipsAt >= 0) {
        const tips = current.slice(tipsAt + 6, current.indexOf("\n", tipsAt + 6));
        const raw = /\nraw\t(.*)\nend\n/.exec(current)?.[1];
        const names = refs.split(" ");
        const same = raw !== undefined && raw === (await rawRefs(store, names)) ? true : tips === (await tipsLine(store, names));
        const deliver = Number(/\ndeliver\t(\d+)\n/.exec(current)?.[1] ?? 0);
        if (same && deliver > store.now().getTime() && !stalePolicyFiles(current)) return;
      }
    }
    const compiled = await compileFastCache(store, env);
    if (compiled) writeSmallFile(path, compiled.text);
  } catch {
    /* only a slower next edit */
  }
}

/** Whether a policy file the cache copied reads differently now. */
function stalePolicyFiles(cache: string): boolean {
  const lines = cache.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^file\t(.*)\t(-|\?|\d+)$/.exec(lines[i]!);
    if (!m) continue;
    const n = m[2] === "-" || m[2] === "?" ? 0 : Number(m[2]);
    const was = [lines[i]!, ...lines.slice(i + 1, i + 1 + n)].join("\n");
    if (fileLines(m[1]!).join("\n") !== was) return true;
    i += n;
  }
  return false;
}
