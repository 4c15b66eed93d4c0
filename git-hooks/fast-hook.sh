#!/bin/sh
# git-handoff-hook <name>: the pre-edit hook (and the git pre-commit hook) without Node for the
# common case. It answers "no objection" (exit 0, no output) only when it can prove the full hook
# (`git-handoff hook <name>`) would answer exactly that and write nothing; anything else, or
# anything it cannot read exactly, runs the full hook with the same input. It reads the cache the
# full hook compiles per agent (src/hooks/fast-cache.ts), valid while the refs it names have the
# values it records and the policy files read as it copied them. docs/hooks.md says what it proves.
# HANDOFF_FAST_HOOK=0 always runs the full hook; HANDOFF_FAST_HOOK_WHY=1 says on stderr why it did.
name=$1

full() {
  self=$0
  while [ -L "$self" ]; do
    link=$(readlink "$self") || break
    case $link in /*) self=$link ;; *) self=${self%/*}/$link ;; esac
  done
  bundle=${self%/*}/../dist/git-handoff.cjs
  if [ -f "$bundle" ] && command -v node >/dev/null 2>&1; then set -- node "$bundle" hook "$@"; else set -- git-handoff hook "$@"; fi
  if [ "${read_payload-}" = 1 ]; then
    printf '%s' "$payload" | "$@"
    exit $?
  fi
  exec "$@"
}

# The decision, in awk (one process, no Node): read the payload as the full hook does, find the
# repository, check the cache still holds, and test every path against it. Prints ok or fall.
FH_AWK='
function fall(why) { if (ENVIRON["HANDOFF_FAST_HOOK_WHY"] != "") printf "git-handoff-hook: full hook: %s\n", why > "/dev/stderr"; print "fall"; exit 0 }
function q(s) { gsub(SQ, SQ "\\\\" SQ SQ, s); return SQ s SQ }
function ws() { if (match(R, /^[ \t\n\r]+/)) R = substr(R, RLENGTH + 1) }
# A JSON string at the start of R: TOK its decoded text, ODD set when it holds a \u escape (not decoded).
function jstr(   raw, out, m, c) {
  if (!match(R, STRRE)) return 0
  raw = substr(R, 2, RLENGTH - 2); R = substr(R, RLENGTH + 1)
  if (match(raw, CTL)) return 0
  ODD = 0; out = ""
  while ((m = index(raw, "\\")) > 0) {
    out = out substr(raw, 1, m - 1); c = substr(raw, m + 1, 1); raw = substr(raw, m + 2)
    if (c == "n") out = out "\n"; else if (c == "t") out = out "\t"; else if (c == "r") out = out "\r"
    else if (c == "b") out = out "\b"; else if (c == "f") out = out "\f"
    else if (c == "u") { ODD = 1; raw = substr(raw, 5) }
    else out = out c
  }
  TOK = out raw
  return 1
}
# One JSON value at the start of R. ctx: "" the top level, "ti" tool_input, "wr" workspace_roots,
# "ta" a value inside tool_input (akey its key), "x" anywhere deeper.
function value(ctx, depth, akey,   c, k, n) {
  if (depth > 64) fall("nesting")
  ws(); c = substr(R, 1, 1)
  if (c == "\"") { if (!jstr()) return 0; VT = "s"; return 1 }
  if (c == "{") {
    R = substr(R, 2); ws()
    if (substr(R, 1, 1) == "}") { R = substr(R, 2); VT = "o"; return 1 }
    for (;;) {
      ws(); if (!jstr()) return 0
      k = TOK
      if (ODD && (ctx == "" || ctx == "ti")) fall("escape in a key")
      ws(); if (substr(R, 1, 1) != ":") return 0
      R = substr(R, 2)
      if (ctx == "" && k == "tool_input") { split("", TI); split("", TIS); split("", TIO); split("", TA); split("", TAN); split("", TAODD) }
      if (ctx == "" && k == "workspace_roots") WR1 = ""
      if (!value(ctx == "" && k == "tool_input" ? "ti" : ctx == "" && k == "workspace_roots" ? "wr" : ctx == "ti" ? "ta" : "x", depth + 1, k)) return 0
      if (ctx == "") { TOP[k] = VT; TOPS[k] = VT == "s" ? TOK : ""; TOPO[k] = VT == "s" ? ODD : 0 }
      if (ctx == "ti") { TI[k] = VT; TIS[k] = VT == "s" ? TOK : ""; TIO[k] = VT == "s" ? ODD : 0 }
      ws(); c = substr(R, 1, 1); R = substr(R, 2)
      if (c == "}") { VT = "o"; return 1 }
      if (c != ",") return 0
    }
  }
  if (c == "[") {
    R = substr(R, 2); ws(); n = 0
    if (ctx == "ta") { TAN[akey] = 0; TAODD[akey] = 0 }
    if (substr(R, 1, 1) == "]") { R = substr(R, 2); VT = "a"; return 1 }
    for (;;) {
      if (!value("x", depth + 1, "")) return 0
      n++
      if (ctx == "wr" && n == 1) { WR1 = VT; WR1S = VT == "s" ? TOK : ""; WR1O = VT == "s" ? ODD : 0 }
      if (ctx == "ta" && VT == "s") { if (ODD) TAODD[akey] = 1; TA[akey, TAN[akey]++] = TOK }
      ws(); c = substr(R, 1, 1); R = substr(R, 2)
      if (c == "]") { VT = "a"; return 1 }
      if (c != ",") return 0
    }
  }
  if (match(R, /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/)) { R = substr(R, RLENGTH + 1); VT = "n"; return 1 }
  if (match(R, /^(true|false|null)/)) { VT = substr(R, 1, RLENGTH) == "null" ? "null" : "b"; R = substr(R, RLENGTH + 1); return 1 }
  return 0
}
# A field as the full hook reads it with str(): a non-empty string, else "".
function tstr(k) { if (TOP[k] == "s" && TOPS[k] != "") { if (TOPO[k]) fall("escape in " k); return TOPS[k] } return "" }
function istr(k) { if (TI[k] == "s" && TIS[k] != "") { if (TIO[k]) fall("escape in tool_input." k); return TIS[k] } return "" }
# tool_input.<k> as text: a string, or the strings of an array joined by sep.
function itext(k, sep,   i, s) {
  if (TI[k] == "a") { if (TAODD[k]) fall("escape in tool_input." k); s = ""; for (i = 0; i < TAN[k]; i++) s = s (i ? sep : "") TA[k, i]; return s }
  return istr(k)
}
function present(k) { return (k in TI) && TI[k] != "null" }
function plain(s) { return s !~ /[^ -~]/ }
function isglob(s) { return s ~ /[][*?{}]/ }
# path resolved against dir as path.resolve does it (lexically).
function resolve(path, dir,   n, i, parts, out, m) {
  if (path !~ /^\//) path = dir "/" path
  n = split(path, parts, "/"); m = 0
  for (i = 1; i <= n; i++) {
    if (parts[i] == "" || parts[i] == ".") continue
    if (parts[i] == "..") { if (m > 0) m--; continue }
    out[++m] = parts[i]
  }
  path = ""
  for (i = 1; i <= m; i++) path = path "/" out[i]
  return path == "" ? "/" : path
}
# Every folder and file on the way to abs, for the symlink test.
function onTheWay(abs,   i) {
  for (i = 2; i <= length(abs); i++) if (substr(abs, i, 1) == "/") LINKS[substr(abs, 1, i - 1)] = 1
  LINKS[abs] = 1
}
function run(cmd,   line, out, sep) {
  out = ""; sep = ""
  while ((cmd | getline line) > 0) { out = out sep line; sep = "\n" }
  close(cmd)
  return out
}
function addEdit(p) { if (!plain(p) || p ~ /\\/) fall("unusual path"); NE++; EDIT[NE] = p }
# The files an apply_patch envelope names (apply-patch.ts).
function patchPaths(text,   n, i, lines, l, found) {
  if (text ~ /[^ -~\n\t]/) fall("unusual patch text")
  n = split(text, lines, "\n"); found = 0
  for (i = 1; i <= n; i++) {
    l = lines[i]
    if (match(l, /^\*\*\* (Add File|Update File|Delete File|Move to): /)) {
      l = substr(l, RLENGTH + 1)
      if (l == "") continue
      sub(/[ \t]+$/, "", l)
      if (l == "") fall("blank patch path")
      addEdit(l); found++
    }
  }
  if (!found) fall("patch names no file")
}
# The words of a command that could name a file (shell-command.ts).
function shellWords(text,   n, i, parts, w, seen, count) {
  n = split(text, parts, SPLITRE); count = 0
  for (i = 1; i <= n; i++) {
    w = parts[i]; sub(QLEAD, "", w); sub(QTAIL, "", w); sub(/^[0-9]*>+&?/, "", w)
    if (w == "" || w ~ /^-/ || w ~ /[$=]/) continue
    if (w !~ /[.\/]/) continue
    if (w ~ /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//) continue
    if (w in seen) continue
    seen[w] = 1; NW++; WORD[NW] = w
    if (++count >= 64) break
  }
}
function cacheLine(   line) { if ((getline line < CACHE) <= 0) fall("cache ends early"); return line }
# Reads the cache of the caller and checks it still holds: agent, worktree, user, host, policy files.
function loadCache(top, gitdir,   line, f, n, i, got, host) {
  CACHE = gitdir "/handoff/fast-hook/" ENVIRON["FH_KEY"]
  if ((getline line < CACHE) <= 0 || line != "git-handoff fast-hook 2") fall("no cache")
  split(cacheLine(), f, "\t"); if (f[1] != "agent") fall("cache format"); AGENT = f[2]
  if (substr(ENVIRON["FH_KEY"], 1, 2) == "a." && AGENT != substr(ENVIRON["FH_KEY"], 3)) fall("cache of another agent")
  line = cacheLine(); if (substr(line, 1, 5) != "refs\t") fall("cache format"); REFSLINE = substr(line, 6)
  line = cacheLine(); if (substr(line, 1, 5) != "tips\t") fall("cache format"); TIPS = substr(line, 6)
  if (cacheLine() != "worktree\t" top) fall("cache of another worktree")
  if (cacheLine() != "gitdir\t" gitdir) fall("cache of another git dir")
  for (;;) {
    line = cacheLine()
    if (substr(line, 1, 5) == "user\t") { if (line != "user\t" ENVIRON["USER"]) fall("cache of another user"); continue }
    if (substr(line, 1, 5) == "host\t") {
      host = ""; if ((getline host < "/proc/sys/kernel/hostname") <= 0 || "host\t" host != line) fall("host name unknown or changed")
      close("/proc/sys/kernel/hostname"); continue
    }
    if (substr(line, 1, 5) != "file\t") break
    n = split(line, f, "\t"); if (n != 3 || f[3] == "?") fall("policy file unreadable")
    if (f[3] == "-") { if ((getline got < f[2]) >= 0) fall("policy file appeared: " f[2]); close(f[2]); continue }
    for (i = 0; i < f[3] + 0; i++) if ((getline got < f[2]) <= 0 || "|" got != cacheLine()) fall("policy file changed: " f[2])
    if ((getline got < f[2]) > 0) fall("policy file grew: " f[2])
    close(f[2])
  }
  if (line == "casefold\t1") fall("case-insensitive file system")
  split(line, f, "\t"); if (f[1] != "casefold") fall("cache format")
  split(cacheLine(), f, "\t"); if (f[1] != "mode") fall("cache format"); MODE = f[2]
  split(cacheLine(), f, "\t"); AUTOLEASE = f[2]
  split(cacheLine(), f, "\t"); DUE = f[2]
  split(cacheLine(), f, "\t"); FLOOR = f[2] + 0
  split(cacheLine(), f, "\t"); DECLARED = f[2]
  split(cacheLine(), f, "\t"); if (f[1] != "deliver") fall("cache format"); DELIVER = f[2] + 0
  NL = 0; NM = 0; ND = 0
  for (;;) {
    line = cacheLine()
    if (line == "end") break
    n = split(line, f, "\t")
    if (f[1] == "L") { NL++; LX[NL] = f[2]; LK[NL] = f[4]; LA[NL] = f[5]; LB[NL] = f[6] }
    else if (f[1] == "M") { NM++; MEXP[NM] = f[2] + 0; MK[NM] = f[3]; MA[NM] = f[4]; MB[NM] = f[5] }
    else if (f[1] == "D") { ND++; DK[ND] = f[2]; DA[ND] = f[3]; DB[ND] = f[4] }
    else if (f[1] != "raw") fall("cache format")
  }
  close(CACHE)
}
function starts(s, p) { return substr(s, 1, length(p)) == p }
function ends(s, p) { return p == "" || (length(s) >= length(p) && substr(s, length(s) - length(p) + 1) == p) }
# Whether lease i of another agent could match rel (a test every match of its glob passes).
function mayMatch(i, rel) {
  if (LK[i] == "E") return LA[i] == rel
  if (LK[i] == "G") return starts(rel, LA[i]) && ends(rel, LB[i])
  return 1
}
# Whether the pattern k/a/b surely matches rel (the exact forms only).
function sure(k, a, b, rel) {
  if (k == "E") return a == rel
  if (k == "D") return starts(rel, a) && length(rel) > length(a)
  if (k == "N") return starts(rel, a) && (substr(rel, length(a) + 1) == b || ends(rel, "/" b))
  return 0
}
# Before any git process: the cache of the repository the folders above dir hold, read for its
# leases only. A lease that may cover a path means the full hook answers: hand over at once.
function earlyLeaseCheck(dir,   d, line, gitdir, file, f, top, i, j, rel, up) {
  for (d = dir; d != ""; d = up) {
    if ((getline line < (d "/.git/HEAD")) > 0) { close(d "/.git/HEAD"); gitdir = d "/.git"; break }
    close(d "/.git/HEAD")
    if ((getline line < (d "/.git")) > 0 && line ~ /^gitdir: /) { close(d "/.git"); gitdir = substr(line, 9); if (gitdir !~ /^\//) gitdir = d "/" gitdir; break }
    close(d "/.git")
    up = d; sub(/\/[^\/]*$/, "", up)
  }
  if (gitdir == "") return
  file = gitdir "/handoff/fast-hook/" ENVIRON["FH_KEY"]
  top = ""
  while ((getline line < file) > 0) {
    if (substr(line, 1, 9) == "worktree\t") top = substr(line, 10)
    if (substr(line, 1, 2) != "L\t" || top == "") continue
    split(line, f, "\t"); NL = 1; LK[1] = f[4]; LA[1] = f[5]; LB[1] = f[6]
    for (i = 1; i <= NE; i++) {
      rel = resolve(EDIT[i], DIR)
      if (starts(rel, top "/") && mayMatch(1, substr(rel, length(top) + 2))) { close(file); fall("a lease may cover " EDIT[i]) }
    }
    if (f[2] != "x") continue
    for (i = 1; i <= NW; i++) {
      rel = resolve(WORD[i], DIR)
      if (starts(rel, top "/") && mayMatch(1, substr(rel, length(top) + 2))) { close(file); fall("an exclusive lease may cover " WORD[i]) }
    }
  }
  close(file); NL = 0
}
# The payload, read as the full hook reads it (agents.ts): which tool, which paths, where.
function agentInput(   s, line, sep, kind, tool, cwd, t, p, i, keys, text, whole, begin, end) {
  s = ""; sep = ""
  while ((getline line) > 0) { s = s sep line; sep = "\n" }
  R = s; ws()
  if (substr(R, 1, 1) != "{" || !value("", 0, "")) fall("not a JSON object")
  ws(); if (R != "") fall("not JSON")
  kind = ENVIRON["FH_NAME"]; sub(/-.*/, "", kind)
  tool = tstr("tool_name"); if (tool == "" || !plain(tool)) fall("no tool_name")
  cwd = tstr("cwd")
  if (cwd == "" && TOP["workspace_roots"] == "a" && WR1 == "s" && WR1S != "") { if (WR1O) fall("escape in workspace_roots"); cwd = WR1S }
  # After the tool ran (Gemini AfterTool) the check only reads: nothing is leased or renewed.
  READONLY = ENVIRON["FH_NAME"] == "gemini-after-tool"
  project = READONLY ? "GEMINI_PROJECT_DIR" : "CLAUDE_PROJECT_DIR"
  if (cwd == "") cwd = (project in ENVIRON) ? ENVIRON[project] : ENVIRON["FH_PWD"]
  if (!plain(cwd) || cwd ~ /\\/) fall("unusual cwd")
  DIR = cwd
  if (TOP["tool_input"] != "o") split("", TI)
  t = kind " " tool
  if (t == "claude Bash" || t ~ /^codex (Bash|exec_command|shell|shell_command|local_shell)$/ || t == "gemini run_shell_command") {
    text = present("command") ? itext("command", " ") : itext("cmd", " ")
    if (text == "") fall("no command")
    if (text ~ /[^ -~\t\n\r\013\014]/) fall("unusual command")
    if (text ~ /apply_?patch/ && (begin = index(text, "*** Begin Patch")) > 0) {
      # It may run a patch (an edit) or not (a word scan): both answers must be no objection.
      whole = substr(text, begin); end = index(whole, "*** End Patch")
      patchPaths(end ? substr(whole, 1, end + 12) : whole)
    }
    shellWords(text)
    if (!NE && !NW) { print "quiet"; exit 0 }
    return
  }
  if (t ~ /^claude (Edit|Write|MultiEdit|NotebookEdit)$/ || t ~ /^codex (Edit|Write)$/ || t ~ /^gemini (write_file|replace|edit)$/ ||
      t ~ /^cursor (Write|Edit|MultiEdit|StrReplace|Delete|edit_file|write|search_replace|delete_file)$/) {
    split("file_path notebook_path path target_file absolute_path", keys, " ")
    p = ""
    for (i = 1; i <= 5 && p == ""; i++) p = istr(keys[i])
    if (p == "") fall("no file path")
    addEdit(p)
    return
  }
  if (t ~ /^codex (apply_patch|ApplyPatch)$/) {
    text = present("command") ? itext("command", "\n") : present("patch") ? itext("patch", "\n") : itext("input", "\n")
    if (text == "") fall("no patch")
    patchPaths(text)
    return
  }
  fall("unknown tool")
}
BEGIN {
  SQ = "\047"; DQ = "\042"
  STRRE = "^" DQ "([^" DQ "\\\\]|\\\\[" DQ "\\\\/bfnrt]|\\\\u[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F])*" DQ
  CTL = "[\001-\037]"
  SPLITRE = "[ \t\n\r\013\014;&|()<>`]+"
  QLEAD = "^[" SQ DQ "]+"; QTAIL = "[" SQ DQ "]+$"
  srand(); NOW = srand() * 1000
  if (mode == "agent") agentInput(); else DIR = ENVIRON["FH_PWD"]
  if (DIR !~ /^\//) fall("relative dir")
  if (NE || NW) earlyLeaseCheck(DIR)
  # Where a path will lead (a symlink on the way sends it to the full hook) needs no repository yet.
  for (i = 1; i <= NE; i++) {
    p = EDIT[i]
    if (isglob(p) || p ~ /^[A-Za-z]:\//) fall("glob or drive path")
    EABS[i] = resolve(p, DIR); onTheWay(EABS[i])
  }
  for (i = 1; i <= NW; i++) {
    w = WORD[i]
    if (!plain(w) || isglob(w) || w ~ /\\/ || w ~ /^[A-Za-z]:\//) fall("unusual word")
    WABS[i] = resolve(w, DIR); onTheWay(WABS[i])
  }
  # One helper run: the repository, the values the cache is keyed by, symlinks, the staged paths.
  cmd = "set -f; cd " q(DIR) " 2>/dev/null || exit 0\n" \
    "info=$(git rev-parse --path-format=absolute --git-dir --show-toplevel 2>/dev/null) || exit 0\n" \
    "{ read -r gitdir; read -r top; } <<EOF\n$info\nEOF\n" \
    "cache=\"$gitdir/handoff/fast-hook/$FH_KEY\"; [ -f \"$cache\" ] || exit 0\n" \
    "{ read -r v; read -r a; read -r refs; } <\"$cache\" || exit 0\n" \
    "printf \"%s\\n%s\\n%s\\n\" \"$gitdir\" \"$top\" \"$refs\"\n" \
    "printf \"%s\\n\" ${refs#refs\t} | git cat-file --batch-check=%\\(objectname\\) 2>/dev/null; echo =L\nfor p in"
  for (p in LINKS) cmd = cmd " " q(p)
  cmd = cmd "; do [ -L \"$p\" ] && echo L; done"
  if (mode == "pre-commit") cmd = cmd "\necho =D; git -c core.quotePath=true diff --cached --name-status -M 2>/dev/null || echo =FAILED"
  n = split(run(cmd), lines, "\n")
  if (n < 4) fall("not a worktree, or no cache")
  gitdir = lines[1]; top = lines[2]
  if (top !~ /^\// || !plain(top) || !plain(gitdir)) fall("unusual repository path")
  loadCache(top, gitdir)
  if (lines[3] != "refs\t" REFSLINE) fall("cache rewritten meanwhile")
  if (MODE == "strict") fall("strict mode")
  if (FLOOR > NOW) fall("clock behind the cache")
  for (i = 1; i <= NE; i++) {
    abs = EABS[i]
    if (length(abs) > 1024 || !starts(abs, top "/")) fall("outside the worktree")
    rel = substr(abs, length(top) + 2)
    if (rel == ".git" || starts(rel, ".git/")) fall("inside .git")
    EREL[i] = rel
  }
  for (i = 1; i <= NW; i++) {
    abs = WABS[i]
    WREL[i] = (length(abs) <= 1024 && starts(abs, top "/")) ? substr(abs, length(top) + 2) : ""
    if (WREL[i] == ".git" || starts(WREL[i], ".git/")) WREL[i] = ""
  }
  tips = ""; part = "refs"
  for (j = 4; j <= n; j++) {
    if (lines[j] == "=L") { part = "links"; continue }
    if (lines[j] == "=D") { part = "staged"; continue }
    if (part == "refs") tips = tips (tips == "" ? "" : " ") lines[j]
    else if (part == "links") { if (lines[j] == "L") fall("symlink on the way") }
    else {
      if (lines[j] == "=FAILED") fall("git diff failed")
      m = split(lines[j], f, "\t")
      for (k = 2; k <= m; k++) {
        if (substr(f[k], 1, 1) == DQ || f[k] == "") fall("quoted path")
        if (isglob(f[k])) fall("a staged name the full hook reads as a glob")
        for (i = 1; i <= NL; i++) if (mayMatch(i, f[k])) fall("a lease may cover " f[k])
      }
    }
  }
  if (tips != TIPS) fall("refs moved")
  if (mode == "pre-commit" && part != "staged") fall("no diff")
  for (e = 1; e <= NE; e++) {
    rel = EREL[e]
    for (i = 1; i <= NL; i++) if (mayMatch(i, rel)) fall("a lease may cover " rel)
    if (AUTOLEASE == 1 && !READONLY) {
      ok = 0
      for (i = 1; i <= NM; i++) if (MEXP[i] > NOW + 1000 && sure(MK[i], MA[i], MB[i], rel)) ok = 1
      if (!ok) fall("first edit: an auto lease is due")
    }
    if (DECLARED == 1) {
      ok = 0
      for (i = 1; i <= ND; i++) if (sure(DK[i], DA[i], DB[i], rel)) ok = 1
      if (!ok) fall("outside the declaration")
    }
  }
  if (NE && !READONLY && DUE != "-" && DUE + 0 <= NOW + 1000) fall("a renewal or claim extension is due")
  # Release requests and answers arrive on the log refs of other agents: the full hook delivers them.
  if (NE && DELIVER <= NOW) fall("release requests are looked for")
  for (e = 1; e <= NW; e++) {
    if (WREL[e] == "") continue
    for (i = 1; i <= NL; i++) if (LX[i] == "x" && mayMatch(i, WREL[e])) fall("an exclusive lease may cover " WREL[e])
  }
  print "ok"
}'

case $name in
  claude-pre-tool-use | codex-pre-tool-use | cursor-pre-tool-use | gemini-before-tool | gemini-after-tool | pre-commit) ;;
  *) full "$@" ;;
esac
[ $# -eq 1 ] && [ "${HANDOFF_FAST_HOOK-1}" != 0 ] && [ -z "${HANDOFF_NOW-}" ] || full "$@"
if [ -n "${HANDOFF_AGENT-}" ]; then key=a.$HANDOFF_AGENT; elif [ -n "${USER-}" ]; then key=u.$USER; else full "$@"; fi
case $key in *[!A-Za-z0-9._@+-]*) full "$@" ;; esac
[ ${#key} -le 202 ] || full "$@"
cd -P . || full "$@"
FH_NAME=$name FH_KEY=$key FH_PWD=$PWD
export FH_NAME FH_KEY FH_PWD

if [ "$name" = pre-commit ]; then
  verdict=$(LC_ALL=C awk -v mode=pre-commit "$FH_AWK" </dev/null)
  [ "$verdict" = ok ] && exit 0
  full "$@"
fi

# Agent hooks: the payload, read within 40% of the hook's budget (the full hook has 80% for it).
[ -z "${GIT_DIR-}${GIT_WORK_TREE-}${GIT_COMMON_DIR-}${GIT_CEILING_DIRECTORIES-}${GIT_DISCOVERY_ACROSS_FILESYSTEM-}" ] || full "$@"
[ -t 0 ] && full "$@"
ms=${HANDOFF_HOOK_TIMEOUT_MS:-5000}
case $ms in *[!0-9]* | 0*) full "$@" ;; esac
[ ${#ms} -le 9 ] && [ "$ms" -ge 10 ] || full "$@"
if command -v timeout >/dev/null 2>&1; then bound=timeout; elif command -v gtimeout >/dev/null 2>&1; then bound=gtimeout; else full "$@"; fi
t=$((ms * 4 / 10))
payload=$($bound "$((t / 1000)).$((t % 1000 / 100))$((t % 100 / 10))$((t % 10))" cat && echo .) || full "$@"
case $payload in *.) payload=${payload%.} ;; *) full "$@" ;; esac
read_payload=1
[ ${#payload} -le 4194304 ] || full "$@"
verdict=$(LC_ALL=C awk -v mode=agent "$FH_AWK" <<EOF
$payload
EOF
)
# "No objection" as each agent reads it (agents.ts formatAnswer); "quiet": not an edit, no answer.
case $verdict in
  quiet) exit 0 ;;
  ok)
    case $name in
      cursor-*) echo '{"permission":"allow"}' ;;
      gemini-before-tool) echo '{}' ;;
    esac
    exit 0
    ;;
esac
full "$@"
