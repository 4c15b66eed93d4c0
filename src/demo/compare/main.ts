// `npm run compare [-- --agents N --tasks M --seed S --json --keep]`
import { compare, reportText } from "./compare.ts";

const USAGE = "usage: npm run compare [-- --agents N (2-16, default 3)] [--tasks M (5-80, default 5)] [--seed S (default 1)] [--json] [--keep]";

function intFlag(args: string[], name: string, dflt: number, min: number, max: number): number {
  const i = args.indexOf(name);
  if (i === -1) return dflt;
  const v = args[i + 1];
  if (v === undefined || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    process.stderr.write(`git-handoff compare: ${name} takes a whole number from ${min} to ${max}\n${USAGE}\n`);
    process.exit(2);
  }
  args.splice(i, 2);
  return Number(v);
}

const args = process.argv.slice(2);
const agents = intFlag(args, "--agents", 3, 2, 16);
const tasks = intFlag(args, "--tasks", 5, 5, 80);
const seed = intFlag(args, "--seed", 1, 0, 1_000_000);
const json = args.includes("--json");
const keep = args.includes("--keep");
const unknown = args.filter((a) => a !== "--json" && a !== "--keep");
if (unknown.length) {
  process.stderr.write(`git-handoff compare: unknown ${unknown.join(" ")}\n${USAGE}\n`);
  process.exit(2);
}
const result = compare({ agents, tasks, seed, keep, progress: (l) => process.stderr.write(`${l}\n`) });
process.stdout.write(json ? JSON.stringify(result, null, 2) + "\n" : reportText(result) + "\n" + (result.repos ? `\nkept: ${result.repos.without} and ${result.repos.with}\n` : ""));
