// One client session serves several scenario tests: a client run costs seconds, so the checks
// that fit one conversation share it, and each test still names one scenario and its assertions.
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => (p ??= make());
}
