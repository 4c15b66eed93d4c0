import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { currentDir, discoverRepo, resolveDir } from "../../git/repo.ts";
import { describeLayout, moveLayout, type LayoutReport, type MoveReport } from "../../store/separate-store.ts";
import { globals, withGlobals } from "../context.ts";

interface StoreOpts {
  separate?: boolean;
  shared?: boolean;
  dryRun?: boolean;
}

export function registerStoreLayout(program: Command): void {
  withGlobals(
    program
      .command("store")
      .description("show where the coordination refs live, or move them: --separate keeps them in a git dir of their own, .git/handoff-store.git (the user's own git fetch and push never list them), --shared puts them back among the repository's refs")
      .option("--separate", "move the coordination refs and their objects into .git/handoff-store.git")
      .option("--shared", "move them back under refs/handoff/ of the repository itself")
      .option("--dry-run", "say what would move, change nothing")
      .addHelpText(
        "after",
        "\nA separate store, with a dedicated coordination remote (git handoff remote --url), keeps the user's\nown git fetch and push as fast as without git-handoff; doctor advises it past 2,000 coordination refs.\nRunning MCP servers, dashboards and workers follow the move at their next call; a command caught in\nthe middle refuses its write and asks to be run again. Every git-handoff using this clone must know\nseparate stores (older ones fail on their first write instead of writing where nobody reads).",
      ),
    { agent: false },
  ).action(async (o: StoreOpts, cmd: Command) => {
    const g = globals(cmd);
    if (o.separate && o.shared) fail("usage", "--separate and --shared exclude each other");
    // No store is opened: it would write this agent's heartbeat to the place being moved.
    const repo = discoverRepo(g.C ? resolveDir(g.C) : currentDir());
    const to = o.separate ? "separate" : o.shared ? "shared" : null;
    const r = to ? await moveLayout(repo, to, { dryRun: !!o.dryRun }) : await describeLayout(repo);
    process.stdout.write(g.json ? JSON.stringify(r, null, 2) + "\n" : render(r));
  });
}

function render(r: LayoutReport | MoveReport): string {
  const where = r.layout === "separate" ? `a separate store, ${r.git_dir}` : `the repository's own refs, in ${r.git_dir}`;
  if (!("from" in r)) return `coordination refs: ${r.refs}, in ${where}\n`;
  if (r.already && (r.moved || r.late_writes || r.conflicts.length)) {
    const lines = [`already there: ${r.refs} coordination refs in ${where}; tidied what was left among the repository's refs (${r.moved} newer, carried over)`];
    if (r.conflicts.length) lines.push(`  kept the store's value of ${r.conflicts.length} ref(s) the repository's copy disagreed with: ${r.conflicts.join(", ")}`);
    return lines.join("\n") + "\n";
  }
  if (r.already) return `already there: ${r.refs} coordination refs in ${where}\n`;
  if (r.dry_run) return `would move ${r.moved} coordination refs into ${where} (dry run: nothing changed)\n`;
  const lines = [`moved ${r.moved} coordination refs into ${where}`];
  if (r.late_writes) lines.push(`  carried over writes made during the move (${r.late_writes} sweep${r.late_writes === 1 ? "" : "s"})`);
  if (r.conflicts.length) lines.push(`  kept the new place's value of ${r.conflicts.length} ref(s) both places changed during the move: ${r.conflicts.join(", ")}`);
  return lines.join("\n") + "\n";
}
