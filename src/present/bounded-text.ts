// Long text views stay readable at 10,000 tasks: each section (a line that does not start with a
// space, then its indented lines) shows its first lines and says how many more there are.

export const SECTION_LINES = 20;

/**
 * Cuts every section of `text` longer than `limit` lines, naming the count left out and `hint`.
 * `unbuilt`: by a section's first line, how many blank lines (one space) it has after those in
 * `text`, left out of the text by a view that builds only the lines it shows.
 */
export function boundSections(text: string, hint: string, limit = SECTION_LINES, unbuilt?: ReadonlyMap<string, number>): string {
  const out: string[] = [];
  let body = 0;
  let hidden = 0;
  let blank = 0;
  const flush = () => {
    const shown = Math.max(0, Math.min(blank, limit - body));
    for (let k = 0; k < shown; k++) out.push(" ");
    hidden += blank - shown;
    if (hidden) out.push(`  … ${hidden} more line${hidden === 1 ? "" : "s"} (${hint})`);
    body = 0;
    hidden = 0;
  };
  for (const line of text.split("\n")) {
    if (!line.startsWith(" ")) {
      flush();
      out.push(line);
      blank = unbuilt?.get(line) ?? 0;
    } else if (body++ < limit) out.push(line);
    else hidden++;
  }
  flush();
  return out.join("\n");
}
