// Filling a pool of files made ahead (temp objects, ref temps) on libuv's thread pool. A process
// busy with back-to-back requests gets back to finished file operations about once per turn of
// its event loop: filled in batches (start four, wait for all four), a pool gained about four
// files a request while a claim and its release took a dozen, ran dry, and the writes then made
// their files on the request's own path (~0.12 ms each on this machine's disk). Here every
// finished one starts the next at once, up to `parallel` under way.

/**
 * Runs `make` while `wanted(running)` says more are needed (`running`: how many are under way),
 * up to `parallel` at once. Resolves once none is under way and none is wanted; on a failure,
 * starts no more and rejects with it once those under way have ended.
 */
export function pipeline(parallel: number, wanted: (running: number) => boolean, make: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let running = 0;
    let failed = false;
    let failure: unknown;
    const pump = (): void => {
      while (!failed && running < parallel && wanted(running)) {
        running++;
        make().then(
          () => {
            running--;
            pump();
          },
          (e: unknown) => {
            running--;
            if (!failed) (failed = true), (failure = e);
            pump();
          },
        );
      }
      if (running === 0) {
        if (failed) reject(failure);
        else resolve();
      }
    };
    pump();
  });
}
