// Bench fixture: a busy repository written in bulk with one `git fast-import` run (objects and
// refs together), so 10,000 tasks and 100,000 events take seconds, not hours of CLI calls.
// Deterministic: the same arguments give the same objects. Records follow the shapes the store
// writes (task.json, agent.json, a format marker, one event per commit message).
import { spawnSync } from "node:child_process";
import { cpSync, existsSync } from "node:fs";
import { tempDir, tempRepo } from "./repo.ts";
import { FORMAT_MARKER } from "../../src/store/codec.ts";
import { summarize, type HandoffEvent } from "../../src/core/event.ts";

export const BASE = Date.parse("2026-11-01T00:00:00.000Z");
/** The scripted clock of every command run against the fixture: a minute after its last event. */
export function fixtureNow(f: ViewsFixture): string {
  return new Date(endOf(f) + 60_000).toISOString();
}

function endOf(f: ViewsFixture): number {
  return BASE + (f.agents + f.tasks * Math.max(1, Math.floor(f.events / f.tasks))) * 1000;
}

export interface ViewsFixture {
  tasks: number;
  agents: number;
  events: number;
  /** Agents that work on a branch of their own (the conflict preview merges them pairwise). */
  branches?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

/**
 * A new repository holding fixture `f`: written once per process and fixture, then copied (a pack
 * and a few thousand small files: tens of milliseconds, where writing 600 tasks and 6,000 events
 * takes 3.5 s on a slow machine, and a test file that wrote one per test spent most of its time
 * there). Each call gets its own copy, so a test may change it freely.
 */
export function viewsRepo(f: ViewsFixture): string {
  const key = JSON.stringify(f);
  let template = templates.get(key);
  // Files sharing a process each clean up their temp folders after their tests: one made for an
  // earlier file may be gone.
  if (!template || !existsSync(template)) {
    template = tempRepo();
    writeViewsFixture(template, f);
    templates.set(key, template);
  }
  const repo = tempDir();
  cpSync(template, repo, { recursive: true, preserveTimestamps: true });
  return repo;
}

const templates = new Map<string, string>();

/** Writes the fixture into `repo` (which has a `main` branch). */
export function writeViewsFixture(repo: string, f: ViewsFixture): void {
  const out: string[] = [];
  let mark = 1;
  const blob = (text: string) => {
    const m = mark++;
    out.push(`blob\nmark :${m}\n${data(text)}`);
    return m;
  };
  const format = blob(FORMAT_MARKER);
  const agentName = (k: number) => `agent-${String(k).padStart(3, "0")}`;
  const main = spawnSync("git", ["rev-parse", "main"], { cwd: repo, encoding: "utf8" }).stdout.trim();
  const branches = f.branches ?? 0;

  // Branches: each agent with a branch changes its own file and, every fifth one, a shared file.
  for (let k = 0; k < branches; k++) {
    const own = blob(`work of ${agentName(k)}\n`);
    const shared = k % 5 === 0 ? blob(`shared line changed by ${agentName(k)}\n`) : null;
    out.push(
      `commit refs/heads/${agentName(k)}\nmark :${mark++}\ncommitter bench <bench@localhost> ${Math.floor(BASE / 1000)} +0000\n${data(`work of ${agentName(k)}`)}from ${main}\nM 100644 :${own} src/${agentName(k)}.ts\n${shared ? `M 100644 :${shared} src/shared.ts\n` : ""}`,
    );
  }

  // Agents: a session each, on its branch when it has one.
  for (let k = 0; k < f.agents; k++) {
    const name = agentName(k);
    const at = iso(BASE + k * 1000);
    // Seen just before the clock the bench runs at: every agent is active.
    const heartbeat = iso(endOf(f) + 30_000);
    const branch = k < branches ? name : "main";
    const record = { agent: name, objective: `work of ${name}`, worktree: `/work/${name}`, branch, scope: "worktree", files: [`src/${name}.ts`], awaits: null, session: null, heartbeat_at: heartbeat, started_at: at, ended_at: null, machine: "bench" };
    const event: HandoffEvent = { type: "session_started", task: "", agent: name, at, scope: "worktree", worktree: `/work/${name}`, branch, objective: record.objective, session: null };
    const rec = blob(JSON.stringify(record, null, 2) + "\n");
    out.push(commitText(`refs/handoff/agents/${name}`, mark++, name, Date.parse(at), event, null, [[format, "format"], [rec, "agent.json"]]));
  }

  // Tasks: the events spread over them, each task a line of commits; the record at its tip.
  const perTask = Math.max(1, Math.floor(f.events / f.tasks));
  let clock = BASE + f.agents * 1000;
  for (let i = 0; i < f.tasks; i++) {
    const id = `t-${String(i).padStart(5, "0")}`;
    const agent = agentName(i % f.agents);
    const created = clock;
    const state = i % 4; // 0 todo, 1 claimed, 2 claimed and renewed, 3 done
    let parent: number | null = null;
    const early = blob(JSON.stringify(taskRecord(id, i, agent, 0, created, created), null, 2) + "\n");
    for (let j = 0; j < perTask; j++) {
      clock += 1000;
      const at = iso(clock);
      const type: HandoffEvent["type"] = j === 0 ? "created" : j === 1 ? "claimed" : j === perTask - 1 && state === 3 ? "done" : j % 3 === 0 ? "leased" : "renewed";
      const event: HandoffEvent = { type, task: id, agent: j === 0 ? "lead" : agent, at, scope: "worktree", worktree: `/work/${agent}`, branch: agent, ...(type === "created" ? { objective: `task ${i}` } : {}), ...(type === "claimed" || type === "renewed" ? { fence: 1, expires_at: iso(clock + 3_600_000_000) } : {}), ...(type === "leased" ? { paths: [`src/${id}.ts`], expires_at: iso(clock + 3_600_000_000) } : {}) };
      const tip = j === perTask - 1;
      const files: [number, string][] = [[format, "format"]];
      if (tip) files.push([blob(JSON.stringify(taskRecord(id, i, agent, state, created, clock, main), null, 2) + "\n"), "task.json"]);
      else files.push([early, "task.json"]);
      const m = mark++;
      out.push(commitText(`refs/handoff/tasks/${id}`, m, event.agent, clock, event, parent, files));
      parent = m;
    }
  }
  const r = spawnSync("git", ["fast-import", "--quiet", "--force"], { cwd: repo, input: out.join(""), maxBuffer: 1 << 30, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git fast-import failed: ${r.stderr}`);
}

function taskRecord(id: string, i: number, agent: string, state: number, created: number, updated: number, commit = "") {
  const claimed = state === 1 || state === 2;
  return {
    id,
    objective: `task ${i}`,
    status: claimed ? "claimed" : state === 3 ? "done" : "todo",
    priority: i % 3,
    scope: [`src/${id}.ts`],
    claim: claimed ? { agent, claimed_at: iso(created), expires_at: iso(updated + 3_600_000_000), fence: 1, ttl_ms: 3_600_000_000, worktree: `/work/${agent}`, branch: agent, scope: "worktree" } : null,
    attempts: 0,
    max_attempts: 3,
    fence: claimed || state === 3 ? 1 : 0,
    created_by: "lead",
    created_at: iso(created),
    updated_at: iso(updated),
    result: state === 3 ? { summary: "done", commit } : null,
  };
}

function commitText(ref: string, m: number, author: string, ms: number, event: HandoffEvent, parent: number | null, files: [number, string][]): string {
  const who = `${author} <git-handoff@localhost> ${Math.floor(ms / 1000)} +0000`;
  const message = `${summarize(event)}\n\n${JSON.stringify(event, null, 2)}\n`;
  // Each commit names its whole tree (deleteall), so a ref's first commit needs no parent.
  return `commit ${ref}\nmark :${m}\nauthor ${who}\ncommitter ${who}\n${data(message)}${parent ? `from :${parent}\n` : ""}deleteall\n${files.map(([b, name]) => `M 100644 :${b} ${name}\n`).join("")}`;
}
