// The docs' links hold: every relative link in README.md and docs/*.md names a file of this
// repository, and every #anchor a heading of the page it points to (GitHub's slugs). Pages are
// renamed and headings reworded over time; a reader following a dead link learns nothing.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";

const ROOT = resolve(import.meta.dirname, "..");
const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function slugs(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Links outside code: `[text](target)`, not images of other sites, not URLs. */
function links(markdown: string): string[] {
  const text = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, "").replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

test("slugs follow GitHub's rules", () => {
  assert.equal([...slugs("# Sync: sharing `refs/handoff/*`\n## A, b & c\n## A, b & c\n```\n# not a heading\n```\n")], ["sync-sharing-refshandoff", "a-b--c", "a-b--c-1"]);
});

test("every relative link in README.md and docs/ names a file here, and every anchor a heading there", () => {
  const dead: string[] = [];
  for (const page of pages) {
    const text = readFileSync(join(ROOT, page), "utf8");
    for (const target of links(text)) {
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const file = path ? resolve(dirname(join(ROOT, page)), decodeURIComponent(path)) : join(ROOT, page);
      if (!existsSync(file)) {
        dead.push(`${page}: ${target} (no file ${relative(ROOT, file)})`);
        continue;
      }
      if (anchor && file.endsWith(".md") && !slugs(readFileSync(file, "utf8")).has(anchor)) dead.push(`${page}: ${target} (no heading #${anchor} in ${relative(ROOT, file)})`);
    }
  }
  assert.equal(dead, []);
});

test.run();
