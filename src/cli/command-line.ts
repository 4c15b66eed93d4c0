// What the dispatcher must know of a command line before it loads any bundle: its verb, and
// whether that verb is one of the hot ones served by the smaller bundle (hot-main.ts). No imports:
// the dispatcher loads this before anything else.

const TAKES_VALUE = new Set(["-C", "--agent"]);

/** The verb of a command line: its first word that is neither an option nor an option's value. */
export function verbOf(argv: string[]): string | undefined {
  return argv[verbAt(argv)];
}

/** Where the verb is in the command line (verbOf), or -1. */
export function verbAt(argv: string[]): number {
  return argv.findIndex((a, i) => !a.startsWith("-") && !TAKES_VALUE.has(argv[i - 1] ?? ""));
}

/**
 * The verbs agents run most, one process each (a claim, a check before an edit, a look at a
 * task): the groups of registerTask, registerClaim and registerLease. A test checks this list
 * against hot-program.ts's table and program.ts's.
 */
export const HOT_VERBS: readonly string[] = ["task", "tasks", "claim", "renew", "release", "done", "fail", "reclaim", "cancel", "lease", "unlease", "leases", "check"];
/**
 * Every verb, in program.ts's order (a test checks it against program.ts's VERBS): the dispatcher
 * keeps a code cache per verb (code-cache.ts), and only for these, never for a word a user typed.
 */
export const ALL_VERBS: readonly string[] = [
  "init", "uninstall", "task", "tasks", "claim", "renew", "release", "done", "fail", "reclaim", "cancel", "events", "status", "stats",
  "session", "heartbeat", "agents", "gc", "depend", "undepend", "ready", "handoff", "inbox", "ack", "ask", "answer", "review", "approve",
  "conflicts", "merge-preview", "lease", "unlease", "leases", "check", "hook", "mcp", "mcp-config", "remote", "sync", "sync-conflicts",
  "fence-check", "compact", "doctor", "wait", "worker", "test", "loop", "store", "memory", "doc", "version", "completion", "dashboard",
];
/** `task`'s subcommands: a command line that runs one of them builds only that one (program-builder.ts). */
export const TASK_SUBCOMMANDS: readonly string[] = ["add", "show", "list"];

/**
 * The code cache a command line runs with (code-cache.ts): its verb's, or for `task add`, `show`
 * and `list` the subcommand's own (`task-show`): a cache holds what its first run compiled, and
 * `task show` with the cache a `task add` left compiled its own code at every start (~2 ms of
 * a cold `task show`, measured). Any word that is no verb shares "any": typos leave no files.
 */
export function cacheVariant(argv: string[]): string {
  const at = verbAt(argv);
  const verb = argv[at];
  if (verb === undefined || !ALL_VERBS.includes(verb)) return "any";
  const sub = argv[at + 1];
  return verb === "task" && sub !== undefined && TASK_SUBCOMMANDS.includes(sub) ? `task-${sub}` : verb;
}

/** The verbs of the remote bundle (remote-main.ts). */
export const REMOTE_VERBS: readonly string[] = ["remote", "sync", "sync-conflicts", "wait"];
/** The verbs of the views' bundle (view-main.ts). */
export const VIEW_VERBS: readonly string[] = ["events", "status", "stats"];
