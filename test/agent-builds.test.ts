// Which build of git-handoff each agent runs: its declaration records the build that wrote it,
// `agents` shows it, and doctor hints when the live agents run different builds.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { amendRecord, readRecordAt } from "./support/forge.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const FILE = "agent.json";
const ref = (agent: string) => `refs/handoff/agents/${agent}`;
type Build = { version: string; commit: string | null; dirty: boolean };
const label = (b: Build) => (b.commit ? `${b.version} (${b.commit}${b.dirty ? "-dirty" : ""})` : b.version);
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function run(repo: string, agent: string, ...args: string[]) {
  const r = cli(args, { cwd: repo, agent });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r;
}

/** The build of the CLI under test, as `version --json` says it. */
function thisBuild(repo: string): Build {
  const { version, commit, dirty } = run(repo, "lead", "version", "--json").json;
  return { version, commit, dirty };
}

test("a declaration records the build that wrote it; agents shows it; a record without one (an older build's) reads as not recorded", () => {
  const repo = tempRepo();
  const build = thisBuild(repo);
  run(repo, "alice", "session", "start", "--objective", "x");
  assert.equal(readRecordAt(repo, ref("alice"), FILE).build, build, "stored in agent.json");
  assert.equal(run(repo, "lead", "agents", "--json").json.agents[0].build, build);
  assert.match(run(repo, "lead", "agents").stdout, new RegExp(`^alice .* build ${literally(label(build))}$`, "m"));

  // Written by a build from before builds were recorded: read all the same, shown as not recorded.
  amendRecord(repo, ref("alice"), (r) => delete r.build, { file: FILE, author: "alice" });
  assert.is(run(repo, "lead", "agents", "--json").json.agents[0].build, null);
  assert.match(run(repo, "lead", "agents").stdout, /^alice .* build not recorded \(an older build\)$/m);
  // The agent's next write records its build again.
  run(repo, "alice", "heartbeat");
  assert.equal(readRecordAt(repo, ref("alice"), FILE).build, build);

  // A field a newer build adds is read past, as older builds read past `build`: no warning, no refusal.
  amendRecord(repo, ref("alice"), (r) => (r.from_a_newer_build = { any: ["thing"] }), { file: FILE, author: "alice" });
  const read = run(repo, "lead", "agents", "--json");
  assert.is(read.stderr, "");
  assert.equal(read.json.agents.map((a: any) => [a.agent, a.build]), [["alice", build]]);
});

type CheckJson = { name: string; status: string; detail: string; fix?: string };
function builds(repo: string): { code: number; ok: boolean; check: CheckJson } {
  const r = cli(["doctor", "--json"], { cwd: repo, agent: "lead" });
  return { code: r.code, ok: r.json.ok, check: (r.json.checks as CheckJson[]).find((c) => c.name === "builds")! };
}

test("doctor names the builds the live agents run: a warning, not a failure, when they differ; disconnected agents do not count", () => {
  const repo = tempRepo();
  const mine = label(thisBuild(repo));
  assert.equal(builds(repo).check, { name: "builds", status: "ok", detail: `no live agent; this doctor runs ${mine}` });
  run(repo, "alice", "session", "start", "--objective", "x");
  run(repo, "bob", "session", "start", "--objective", "y");
  assert.equal(builds(repo).check, { name: "builds", status: "ok", detail: `every live agent (alice, bob) runs ${mine}; this doctor runs ${mine}` });

  amendRecord(repo, ref("bob"), (r) => (r.build = { version: "0.0.9", commit: "0123456789ab", dirty: false }), { file: FILE, author: "bob" });
  const mixed = builds(repo);
  assert.is(mixed.check.status, "warn");
  // The most used first; as many agents each, in text order.
  assert.is(mixed.check.detail, `live agents run 2 builds of git-handoff: 0.0.9 (0123456789ab): bob; ${mine}: alice; this doctor runs ${mine}`);
  assert.match(mixed.check.fix!, /^run one build everywhere/);
  assert.ok(mixed.ok && mixed.code === 0, "a hint: doctor does not fail over it");

  // Carol's record is from a build before builds were recorded: a third build.
  run(repo, "carol", "session", "start", "--objective", "z");
  amendRecord(repo, ref("carol"), (r) => delete r.build, { file: FILE, author: "carol" });
  assert.match(builds(repo).check.detail, /^live agents run 3 builds of git-handoff: .*not recorded \(an older build\): carol/);

  // Sessions that ended do not count.
  for (const agent of ["bob", "carol"]) amendRecord(repo, ref(agent), (r) => (r.ended_at = r.heartbeat_at), { file: FILE, author: agent });
  assert.equal(builds(repo).check, { name: "builds", status: "ok", detail: `every live agent (alice) runs ${mine}; this doctor runs ${mine}` });
});

test.run();
