// One of Node's internal bindings (libuv's handles: pipe_wrap, process_wrap, tty_wrap), for the few
// cold paths where the public module that wraps it loads net and the stream modules first (a
// hook's stdin on a socket, the catch writer's start, whether output is a terminal). Undefined
// where Node no longer offers it: each caller then uses the public module.
// process.binding is deprecated in the documentation only (DEP0111); under --pending-deprecation it
// would say so on stderr, which an agent shows of a hook: warnings are off for the call.
export function nodeBinding<T>(name: string): T | undefined {
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    return (process as unknown as { binding(name: string): T }).binding(name);
  } catch {
    return undefined;
  } finally {
    process.noDeprecation = quiet;
  }
}
