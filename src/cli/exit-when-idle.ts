// A one-shot command is done once its answer is out and nothing it started is still pending. Node
// would then exit on its own, but first it turns the event loop once more and runs every task V8
// has queued for this thread: a young-generation collection V8 asks for once the young
// generation is 80% full (a cold `task show` or `claim` reaches that loading its bundle: 3-5 ms
// here collecting the garbage of a process about to end), and the optimising compiles of functions
// that grew hot while the command ran (1.5-4 ms measured on a cold `claim` between its last line
// and its exit), code this process will never run. So the exit is taken from a process.nextTick
// queued by a promise callback queued here: it runs once every promise callback queued before
// (and any they queue) has run, before the loop turns, wherever this is called from (a tick
// queued from the top of a script would run before that script's promise callbacks). Anything
// still pending (a write to a slow pipe, a child process, a timer, a server) keeps the process
// alive as before: looked at again after the next turn, and otherwise it exits on its own.

const idle = () => process.getActiveResourcesInfo().length === 0;

/** After the current turn's promises: exits with `process.exitCode` when nothing keeps the process alive. */
export function exitWhenIdle(): void {
  // A promise callback, not queueMicrotask: the same queue, but Node's first queueMicrotask sets up
  // its async hooks for it (~0.2 ms of a cold process's last steps).
  void Promise.resolve().then(() =>
    process.nextTick(() => {
      if (idle()) process.exit();
      setImmediate(() => {
        if (idle()) process.exit();
      });
    }),
  );
}
