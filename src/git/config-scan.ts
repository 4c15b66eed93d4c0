// What git's configuration says about ref writes, read from its files without starting git, for
// one-shot commands: their one `git update-ref` costs a process (and node:child_process) that an
// in-process write (loose-ref-writer.ts) does not. Only the plain case is answered here: the files
// git 2.39 reads (system, global, the repository's, the worktree's), none with an include, no
// configuration from the environment (`git -c`, GIT_CONFIG_COUNT), and the keys that matter
// (core.logAllRefUpdates, core.sharedRepository, core.hooksPath, core.fsync,
// core.filesRefLockTimeout) each absent or a plain value.
// Anything else returns null and the caller asks git (`git config --null --list`) or lets git
// write. The system file is looked for where Debian's and a source build's git keep it; a git
// built with another prefix has its system file elsewhere, unread here: in that case only
// settings of those keys made system-wide would go unseen.
import { homedir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { refWritePolicy, type RefWritePolicy } from "./loose-ref-writer.ts";

const SYSTEM_FILES = ["/etc/gitconfig", "/usr/local/etc/gitconfig"];
const WATCHED = new Set(["logallrefupdates", "sharedrepository", "hookspath", "fsync", "filesreflocktimeout"]);

/** The files git reads, in its order, or null when the environment adds configuration of its own. */
function configFiles(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string): string[] | null {
  if (env.GIT_CONFIG_PARAMETERS || env.GIT_CONFIG_COUNT || env.GIT_CONFIG) return null;
  const files: string[] = [];
  // git reads GIT_CONFIG_NOSYSTEM as a boolean: "0", "false", "no", "off" or empty read the system file.
  const noSystem = env.GIT_CONFIG_NOSYSTEM !== undefined && !/^(0|false|no|off|)$/i.test(env.GIT_CONFIG_NOSYSTEM.trim());
  if (!noSystem) files.push(...(env.GIT_CONFIG_SYSTEM ? [env.GIT_CONFIG_SYSTEM] : SYSTEM_FILES));
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else {
    const home = env.HOME || homedir();
    files.push(join(env.XDG_CONFIG_HOME || join(home, ".config"), "git", "config"), join(home, ".gitconfig"));
  }
  files.push(join(commonDir, "config"), join(gitDir, "config.worktree"));
  return files;
}

/**
 * The watched keys as `git config --null --list` would print them (`key\nvalue\0`), or null when
 * a file is beyond this reader (an include, a continued line, a quoted or escaped value).
 */
export function watchedEntries(text: string): string | null {
  let section = "";
  let out = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line[0] === "#" || line[0] === ";") continue;
    if (line[0] === "[") {
      const m = /^\[\s*([A-Za-z0-9.-]+)\s*(?:"[^"\\]*")?\s*\]\s*(?:[#;].*)?$/.exec(line);
      if (!m) return null;
      section = m[1]!.toLowerCase();
      // A subsection makes it another section (`[core "x"]` is core.x.*); includes load more files.
      if (line.includes('"')) section += ".sub";
      if (section === "include" || section.startsWith("includeif")) return null;
      continue;
    }
    if (line.endsWith("\\")) return null;
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!m) return null;
    const key = m[1]!.toLowerCase();
    if (section !== "core" || !WATCHED.has(key)) continue;
    if (m[2] === undefined) {
      out += `core.${key}\0`;
      continue;
    }
    const value = m[2].replace(/\s+[#;].*$/, "").trim();
    if (/["\\#;]/.test(value)) return null;
    out += `core.${key}\n${value}\0`;
  }
  return out;
}

/** The ref write policy from git's files, or null when git must be asked. */
export function scanRefWritePolicy(env: NodeJS.ProcessEnv, commonDir: string, gitDir: string, workTree: string | null): RefWritePolicy | null {
  const files = configFiles(env, commonDir, gitDir);
  if (!files) return null;
  let list = "";
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue;
      return null;
    }
    const entries = watchedEntries(text);
    if (entries === null) return null;
    list += entries;
  }
  return refWritePolicy(list, commonDir, workTree);
}
