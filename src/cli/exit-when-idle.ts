// A one-shot command is done once its answer is out and nothing it started is still pending. Node
// would then exit on its own, but first it waits for every background task V8 has queued:
// optimising compiles of the functions that grew hot while the command ran (a claim hashes its
// objects in JS, small-object-codec.ts; a listing compares many names), code this process will
// never run. Measured on a cold `claim`: 1.5-4 ms between the last line of the command and the
// exit, doing nothing else. process.exit() at that point skips the wait (a compile already running
// is still finished). Anything still pending (a write to a slow pipe, a child process, a timer, a
// server) keeps the process alive as before, and it exits on its own.

/** After the current turn's promises: exits with `process.exitCode` when nothing keeps the process alive. */
export function exitWhenIdle(): void {
  setImmediate(() => {
    if (process.getActiveResourcesInfo().length === 0) process.exit();
  });
}
