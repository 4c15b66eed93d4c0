// The compare run's workload: the seed's story (an endpoint's contract, its tests, the shared config)
// plus, at larger sizes, feature tasks that each add a module and register it in a shared file.
// It is built from what users of peer tools report fails first when agents run in parallel:
// the same task picked twice, shared infrastructure files edited by several agents, a dependent
// task started before its API exists, a result that has to cross sessions, branches that collide.
import type { Sandbox, Session } from "../sandbox.ts";

export interface Edit {
  file: string;
  /** The new text of the file, from its current text. `variant` tells two agents' versions apart. */
  apply(text: string | null, variant: number): string;
}

export interface WorkTask {
  id: string;
  objective: string;
  priority: number;
  /** Files the task changes; claimed exclusively in the coordinated run. */
  scope: string[];
  after: string[];
  edits: Edit[];
  /** What the producer hands over to the tasks that wait on this one. */
  contract?: string;
}

export const VERIFY = "node --test test/";

function replaceOnce(text: string | null, from: string, to: string, file: string): string {
  if (text === null || !text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

/** A line added at the end of a shared file's list: every such edit lands at the same place. */
function appendBefore(marker: string, line: string, file: string) {
  return (text: string | null) => replaceOnce(text, marker, `${line}\n${marker}`, file);
}

const STORY: WorkTask[] = [
  {
    id: "contract",
    objective: "GET /users/:id also returns the user's email (a contract change)",
    priority: 3,
    scope: ["src/server.js", "config/app.json"],
    after: [],
    contract: "GET /users/:id now returns {id, name, email}; config features.emailInResponses is true",
    edits: [
      {
        file: "src/server.js",
        apply: (t, v) =>
          replaceOnce(t, "body: { id: user.id, name: user.name } };", `body: { id: user.id, name: user.name, email: ${v % 2 ? "user.email ?? null" : "user.email"} } };`, "src/server.js"),
      },
      { file: "config/app.json", apply: (t) => replaceOnce(t, '"emailInResponses": false', '"emailInResponses": true', "config/app.json") },
    ],
  },
  {
    id: "tests",
    objective: "tests for the endpoint's new email field",
    priority: 3,
    scope: ["test/users.test.js"],
    after: ["contract"],
    edits: [
      {
        file: "test/users.test.js",
        apply: (t, v) =>
          replaceOnce(
            t,
            '  assert.equal(r.body.name, "Ada Lovelace");\n',
            `  assert.equal(r.body.name, "Ada Lovelace");\n  assert.equal(r.body.email, "ada@example.org"${v % 2 ? ', "the email is part of the contract"' : ""});\n`,
            "test/users.test.js",
          ),
      },
    ],
  },
  {
    id: "config",
    objective: "turn on the response cache in the shared config",
    priority: 2,
    scope: ["config/app.json"],
    after: [],
    edits: [{ file: "config/app.json", apply: (t) => replaceOnce(t, '"logLevel": "info",', '"logLevel": "info",\n  "responseCache": { "ttlSeconds": 60 },', "config/app.json") }],
  },
  {
    id: "docs",
    objective: "document the endpoint in the README",
    priority: 1,
    scope: ["README.md"],
    after: [],
    edits: [{ file: "README.md", apply: (t) => `${t ?? ""}\n## API\n\nGET /users/:id returns the user as JSON.\n` }],
  },
  {
    id: "lint",
    objective: "add a lint script to the package manifest",
    priority: 1,
    scope: ["package.json"],
    after: [],
    edits: [{ file: "package.json", apply: (t) => replaceOnce(t, '"scripts": { "test": "node --test test/" }', '"scripts": { "test": "node --test test/", "lint": "node --check src/server.js" }', "package.json") }],
  },
];

/** Where feature tasks register themselves: shared files, edited at one spot by each of them. */
const REGISTRY = { file: "src/features/index.js", marker: "// (end of the feature list)" };

function feature(k: number): WorkTask {
  const id = `feature-${k}`;
  // Every third feature builds on the one before it: an API and its first consumer.
  const dependsOn = k > 1 && k % 3 === 0 ? `feature-${k - 1}` : null;
  const moduleText = dependsOn
    ? `import { ${camel(dependsOn)} } from "./${dependsOn}.js";\nexport const ${camel(id)} = () => ${camel(dependsOn)}() + 1;\n`
    : `export const ${camel(id)} = () => ${k};\n`;
  const testText = `import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { ${camel(id)} } from "../src/features/${id}.js";\n\ntest("${id} answers", () => assert.equal(typeof ${camel(id)}(), "number"));\n`;
  return {
    id,
    objective: `feature ${k}: a module, its test, and its line in the feature list`,
    priority: 0,
    scope: [`src/features/${id}.js`, `test/${id}.test.js`, REGISTRY.file],
    after: dependsOn ? [dependsOn] : [],
    ...(k % 3 === 2 ? { contract: `${id}.js exports ${camel(id)}(): number` } : {}),
    edits: [
      { file: `src/features/${id}.js`, apply: () => moduleText },
      { file: `test/${id}.test.js`, apply: () => testText },
      { file: REGISTRY.file, apply: appendBefore(REGISTRY.marker, `export * from "./${id}.js";`, REGISTRY.file) },
    ],
  };
}

function camel(id: string): string {
  return id.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
}

/** The default size is the seed's story (five tasks); more tasks add features. */
export function workload(tasks: number): WorkTask[] {
  if (tasks < STORY.length) throw new Error(`--tasks must be at least ${STORY.length} (the story's tasks)`);
  return [...STORY, ...Array.from({ length: tasks - STORY.length }, (_, i) => feature(i + 1))];
}

/** Prepares the sample repository for features: the shared list they all register in. */
export function prepareRepo(box: Sandbox, lead: Session | null): void {
  box.mkdir(lead, "src/features");
  box.write(lead, REGISTRY.file, `// Every feature module, re-exported.\n${REGISTRY.marker}\n`);
  box.mustGit(lead, ["add", "-A"]);
  box.mustGit(lead, ["commit", "-q", "-m", "feature list"]);
}

/** Applies a task's edits in a worktree (what a coding agent's edit tool would do). */
export function applyEdits(box: Sandbox, who: Session, task: WorkTask, variant: number): string[] {
  for (const e of task.edits) {
    let current: string | null;
    try {
      current = box.read(who, e.file);
    } catch {
      current = null;
    }
    const dir = e.file.includes("/") ? e.file.slice(0, e.file.lastIndexOf("/")) : "";
    if (dir) box.mkdir(who, dir);
    box.write(who, e.file, e.apply(current, variant));
  }
  return task.edits.map((e) => e.file);
}
