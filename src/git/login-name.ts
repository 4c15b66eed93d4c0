// This user's login name as os.userInfo() gives it (getpwuid(3)), without loading node:os where it
// can: a command run without HANDOFF_AGENT, USER or USERNAME (a service, a container, CI) names
// its agent after it (store.ts defaultAgentName), and node:os's load with the C library's
// name-service set-up was ~0.5 ms of each such cold command. Read from /etc/passwd only where the
// C library reads it first and would find this user there (nsswitch.conf's passwd line starts with
// `files`, the file plain); anything else asks node:os.
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";

let name: string | undefined;

export function loginName(): string {
  if (name !== undefined) return name;
  const uid = process.getuid?.(); // undefined on Windows
  let found: string | null = null;
  if (process.platform === "linux" && uid !== undefined) {
    try {
      found = nameInFiles(readFileSync("/etc/nsswitch.conf", "latin1"), readFileSync("/etc/passwd", "utf8"), uid);
    } catch {
      found = null; // a file missing or unreadable: the C library's own answer
    }
  }
  return (name = found ?? userInfo().username);
}

/**
 * The name getpwuid(uid) finds in `passwd` when `nsswitch` sends passwd lookups to the files
 * first; null where this cannot be sure of the C library's answer (another source first, a
 * `compat` file's +/- lines, a line it cannot read, no such user: node:os is asked then).
 */
export function nameInFiles(nsswitch: string, passwd: string, uid: number): string | null {
  let sources: string | null = null;
  for (const raw of nsswitch.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("passwd:")) continue;
    if (sources !== null) return null; // a second passwd line: which one holds is not this reader's to say
    sources = line.slice("passwd:".length).trim();
  }
  // The first source, up to a blank (no pattern: a cold process compiles each one it runs).
  let end = 0;
  while (sources !== null && end < sources.length && sources.charCodeAt(end) > 0x20) end++;
  if (sources?.slice(0, end) !== "files") return null;
  for (const raw of passwd.split("\n")) {
    const line = raw.trimStart();
    if (line === "") continue;
    if (line[0] === "#") return null; // not a line the C library is sure to pass over
    const fields = line.split(":");
    if (fields.length !== 7 || !fields[0] || fields[0][0] === "+" || fields[0][0] === "-" || !digits(fields[2]!) || !digits(fields[3]!)) return null;
    if (Number(fields[2]) === uid) return fields[0];
  }
  return null;
}

function digits(s: string): boolean {
  if (!s) return false;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x30 || s.charCodeAt(i) > 0x39) return false;
  return true;
}
