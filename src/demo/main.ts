// `npm run demo [-- --keep]`: the three-session demo on the built CLI. Exit 0 only if every
// expected catch happened.
import { runDemo, summary } from "./story.ts";

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--keep");
if (unknown.length) {
  process.stderr.write(`usage: npm run demo [-- --keep]   (unknown: ${unknown.join(" ")})\n`);
  process.exit(2);
}
const keep = args.includes("--keep");
const result = runDemo({ keep });
process.stdout.write(summary(result, keep) + "\n");
process.exitCode = result.ok ? 0 : 1;
