// The tests of hooks-shell.test.ts, run through the sh fast path (git-hooks/fast-hook.sh) that init
// installs as the agents' pre-edit hook: it must give every answer the full hook gives.
process.env.HANDOFF_TEST_HOOK = "fast";
await import("./hooks-shell.test.ts");
