// This machine's name as os.hostname() gives it, without loading node:os where it can: on Linux it
// is read from /proc, which holds the same gethostname(2) value for this UTS namespace. A cold
// claim takes a lock that records it (owned-lock.ts), and every command run without HANDOFF_AGENT
// names its agent after it (store.ts defaultAgentName): node:os's load was ~0.5 ms of each.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

let host: string | undefined;

export function thisHost(): string {
  if (host !== undefined) return host;
  try {
    host = process.platform === "linux" ? readFileSync("/proc/sys/kernel/hostname", "utf8").trim() : "";
  } catch {
    host = "";
  }
  return (host ||= hostname());
}
