import { existsSync } from "node:fs";
import { readIfThere } from "../git/optional-file.ts";
import { ConfigFile, DEFAULT_CONFIG, resolveConfig, type Config } from "../core/config.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { leftOutIgnores } from "../core/lease-policy.ts";
import { issueText } from "../core/schema-helpers.ts";

export const CONFIG_NAME = ".handoff.yaml";

/**
 * Reads `.handoff.yaml` from the worktree root; a missing file means the defaults. Keys this build
 * does not know (written for a newer git-handoff, in a repository shared by mixed versions) are
 * left out with a warning added to `warnings`, instead of failing the whole file.
 */
export async function loadConfig(workTree: string | null, warnings: string[] = []): Promise<Config> {
  if (!workTree) return DEFAULT_CONFIG;
  // Unreadable (permissions, too many open files) throws: the front end names the cause.
  const text = readIfThere(`${workTree}/${CONFIG_NAME}`);
  return text === null ? DEFAULT_CONFIG : parseConfig(text, warnings);
}

/** Parses and validates the config, naming the line of the first problem. */
export async function parseConfig(text: string, warnings: string[] = []): Promise<Config> {
  return resolveConfig(await parseConfigData(text, warnings));
}

/**
 * The file's keys as written, validated (durations included), naming the line of the first problem.
 * Keys this build does not know (written for a newer git-handoff, in a repository shared by mixed
 * versions) are left out with a warning added to `warnings`, instead of failing the whole file.
 */
export async function parseConfigData(text: string, warnings: string[] = []): Promise<ConfigFile> {
  const { parseDocument, LineCounter, isNode } = await loadYaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const line = e.linePos?.[0]?.line ?? lines.linePos(e.pos[0]).line;
    fail("invalid_input", `${CONFIG_NAME} line ${line}: ${e.message.split("\n")[0]}`);
  }
  let raw: unknown;
  try {
    // The parser refuses some documents only when building values: an alias bomb (aliases
    // expanding to millions of nodes) is the one to expect.
    raw = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    fail("invalid_input", `${CONFIG_NAME}: the YAML parser refused it: ${(e as Error).message.split("\n")[0]}`);
  }
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    const known = Object.keys(ConfigFile.shape);
    for (const key of Object.keys(raw)) {
      if (known.includes(key)) continue;
      const line = findKeyLine(doc.contents, key, lines);
      warnings.push(`${CONFIG_NAME}${line ? ` line ${line}` : ""}: unknown key ${JSON.stringify(key)} ignored (a newer git-handoff, or a typo; known keys: ${known.join(", ")})`);
      delete (raw as Record<string, unknown>)[key];
    }
  }
  const parsed = ConfigFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String);
    // For an unknown key zod reports the parent; point at the key itself.
    const keys = (issue as { keys?: string[] }).keys;
    const target = keys?.length ? [...path, keys[0]!] : path;
    const node = target.length ? doc.getIn(target, true) : doc.contents;
    const pair = keys?.length ? findKeyLine(doc.contents, keys[0]!, lines) : null;
    const line = pair ?? (isNode(node) && node.range ? lines.linePos(node.range[0]).line : 1);
    const known = keys?.length ? ` (known keys: ${Object.keys(ConfigFile.shape).join(", ")})` : "";
    fail("invalid_input", `${CONFIG_NAME} line ${line}: ${target.join(".") || "(top level)"}: ${issueText(issue)}${known}`);
  }
  // Globs past a lease pattern's bounds are left out where the policy is built (lease-policy.ts): said here.
  warnings.push(...leftOutIgnores(CONFIG_NAME, parsed.data.ignore ?? []));
  try {
    resolveConfig(parsed.data);
    return parsed.data;
  } catch (e) {
    if (e instanceof HandoffError) {
      const key = Object.keys(parsed.data).find((k) => e.message.includes(k)) ?? "";
      const line = key ? findKeyLine(doc.contents, key, lines) : null;
      fail("invalid_input", `${line ? `${CONFIG_NAME} line ${line}: ` : ""}${e.message}`);
    }
    throw e;
  }
}

function findKeyLine(contents: unknown, key: string, lines: { linePos(o: number): { line: number } }): number | null {
  const items = (contents as { items?: { key?: { value?: unknown; range?: number[] } }[] })?.items ?? [];
  const item = items.find((i) => i.key?.value === key);
  return item?.key?.range ? lines.linePos(item.key.range[0]!).line : null;
}

type YamlModule = typeof import("./yaml-bundle.ts");

/**
 * Bundled, the parser comes from dist/yaml-bundle.cjs beside the running bundle, required by a
 * computed path so esbuild leaves it out of the hot bundles; from source (tests, tsx) it is the
 * yaml package itself, which yaml-bundle.ts only re-exports. A package name, not a path relative
 * to this file: the test processes run src/ bundled (test/support/test-bundles.ts), where this
 * file's folder is not the chunk's.
 */
async function loadYaml(): Promise<YamlModule> {
  const beside = typeof __dirname === "string" ? `${__dirname}/yaml-bundle.cjs` : "";
  if (beside && existsSync(beside)) return require(beside) as YamlModule;
  const source = "ya" + "ml"; // not a literal: esbuild must not inline it
  return import(source) as Promise<YamlModule>;
}
