#!/bin/sh
# git-handoff-hook <name>: the pre-edit hook (and the git pre-commit hook) without Node for the
# common case. It answers "no objection" (exit 0, no output) only when it can prove the full hook
# (`git-handoff hook <name>`) would answer exactly that and write nothing; anything else, or
# anything it cannot read exactly, runs the full hook with the same input. It reads the cache the
# full hook compiles per agent (src/hooks/fast-cache.ts), valid while the refs it names have the
# values it records and the policy files read as it copied them. docs/hooks.md says what it proves.
# HANDOFF_FAST_HOOK=0 always runs the full hook; HANDOFF_FAST_HOOK_WHY=1 says on stderr why it did.
name=$1

# The bundle next to this script (through symlinks), or "" to run git-handoff from PATH.
locate() {
  self=$0
  while [ -L "$self" ]; do
    link=$(readlink "$self") || break
    case $link in /*) self=$link ;; *) self=${self%/*}/$link ;; esac
  done
  bundle=${self%/*}/../dist/git-handoff.cjs
  [ -f "$bundle" ] && command -v node >/dev/null 2>&1 || bundle=
}

# Once the fast path gave a deny, warn or info answer: the full hook on the same input, its answer
# discarded, logs the catch (and does whatever else it does after answering); nobody waits for it
# but with HANDOFF_HOOK_CATCH_WAIT=1 (a test switch).
afterwards() {
  locate
  if [ -n "$bundle" ]; then set -- node "$bundle" hook "$@"; else set -- git-handoff hook "$@"; fi
  if [ "${HANDOFF_HOOK_CATCH_WAIT-}" = 1 ]; then
    printf '%s' "${payload-}" | HANDOFF_HOOK_AFTER_ANSWER=1 "$@" >/dev/null 2>&1
    [ -z "${copy-}" ] || rm -f -- "$copy"
    return 0
  fi
  if [ -n "${copy-}" ]; then
    ({ HANDOFF_HOOK_AFTER_ANSWER=1 "$@" </dev/null; rm -f -- "$copy"; } >/dev/null 2>&1 &) </dev/null >/dev/null 2>&1
    return 0
  fi
  # In a session of its own where it can be (as Node's detached writer is): the agent may end the hook's group.
  command -v setsid >/dev/null 2>&1 && set -- setsid "$@"
  (printf '%s' "${payload-}" | HANDOFF_HOOK_AFTER_ANSWER=1 "$@" >/dev/null 2>&1 &) </dev/null >/dev/null 2>&1
}

full() {
  locate
  if [ -n "$bundle" ]; then set -- node "$bundle" hook "$@"; else set -- git-handoff hook "$@"; fi
  # Once this script has spent time on the payload, the full hook gets what is left of the budget,
  # not a budget of its own: the whole run stays within HANDOFF_HOOK_TIMEOUT_MS.
  if [ -n "${waited_from-}" ]; then
    left=$((ms - t))
    centis
    [ -n "$C" ] && [ "$waited_from" != none ] && left=$((ms - (C - waited_from) * 10))
    [ "$left" -ge 10 ] || left=10
    HANDOFF_HOOK_TIMEOUT_MS=$left
    export HANDOFF_HOOK_TIMEOUT_MS
  fi
  if [ "${read_payload-}" = 1 ]; then
    printf '%s' "$payload" | "$@"
    exit $?
  fi
  exec "$@"
}

# C: the machine's uptime in hundredths of a second, read without a process (Linux); empty elsewhere.
centis() {
  C= up=
  [ -r /proc/uptime ] && read -r up _ </proc/uptime 2>/dev/null
  case $up in
    [0-9]*.[0-9][0-9]) cs=${up#*.}; C=$((${up%.*} * 100 + ${cs#0})) ;;
  esac
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
# Whether a folder or file name in rel is longer than any file system allows (paths.ts
# MAX_SEGMENT_LENGTH): the full hook refuses such a path, where the lease tests below would read it.
function longName(rel,   n, i, parts) { n = split(rel, parts, "/"); for (i = 1; i <= n; i++) if (length(parts[i]) > 255) return 1; return 0 }
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
# The kernel takes link/.. up from where the symlink leads, not back to where it is (realpath, and
# so the full hook for an absolute path, too): with a `..`, the folders as typed are tested as well.
function upAfterLinks(p) { if (p ~ /(^|\/)\.\.(\/|$)/ || DIR ~ /(^|\/)\.\.(\/|$)/) onTheWay(p ~ /^\// ? p : DIR "/" p) }
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
# Quoting is read only where it cannot change the words: a quote that may join words (a space or an
# operator inside quotes, an odd number of quotes) or sits inside a word goes to the full hook.
function shellWords(text,   n, i, parts, w, seen, count, t) {
  t = text
  if (gsub(DQ, DQ, t) % 2 || gsub(SQ, SQ, t) % 2) fall("an unbalanced quote")
  if (text ~ QSEPD || text ~ QSEPS) fall("a quoted part with a space or an operator in it")
  if (index(text, "\\")) fall("a backslash (it may join words)")
  n = split(text, parts, SPLITRE); count = 0
  for (i = 1; i <= n; i++) {
    w = parts[i]; sub(QLEAD, "", w); sub(QTAIL, "", w)
    if (w ~ QANY) fall("a quote inside a word")
    sub(/^[0-9]*>+&?/, "", w)
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
  if ((getline line < CACHE) <= 0 || line != "git-handoff fast-hook 4") fall("no cache")
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
  split(cacheLine(), f, "\t"); if (f[1] != "grace") fall("cache format"); GRACE = f[2] + 0
  NL = 0; NM = 0; ND = 0; NI = 0
  for (;;) {
    line = cacheLine()
    if (line == "end") break
    n = split(line, f, "\t")
    if (f[1] == "L") {
      NL++; LX[NL] = f[2]; LEXP[NL] = f[3] + 0; LK[NL] = f[4]; LA[NL] = f[5]; LB[NL] = f[6]
      LEK[NL] = f[7]; LEA[NL] = f[8]; LEB[NL] = f[9]
      LAG[NL] = f[10]; LWHO[NL] = f[11]; LPAT[NL] = f[12]; LISO[NL] = f[13]; LWHY[NL] = f[14]; LNEG[NL] = f[15]
    }
    else if (f[1] == "I") { NI++; IK[NI] = f[2]; IA[NI] = f[3]; IB[NI] = f[4] }
    else if (f[1] == "M") { NM++; MEXP[NM] = f[2] + 0; MK[NM] = f[3]; MA[NM] = f[4]; MB[NM] = f[5] }
    else if (f[1] == "D") { ND++; DK[ND] = f[2]; DA[ND] = f[3]; DB[ND] = f[4] }
    else if (f[1] != "raw") fall("cache format")
  }
  close(CACHE)
}
function starts(s, p) { return substr(s, 1, length(p)) == p }
function ends(s, p) { return p == "" || (length(s) >= length(p) && substr(s, length(s) - length(p) + 1) == p) }
# Whether lease i of another agent could match rel (a test every match of its glob passes).
function mayMatch(i, rel) { return superset(LK[i], LA[i], LB[i], rel) }
function superset(k, a, b, rel) {
  if (k == "E") return a == rel
  if (k == "G") return starts(rel, a) && ends(rel, b)
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
      if (!starts(rel, top "/") || !mayMatch(1, substr(rel, length(top) + 2))) continue
      # A lease this path can name exactly in an answer is answered below; any other is for the full hook.
      if (f[7] == "-" || f[7] == "" || SHELLTOOL) { close(file); fall("a lease may cover " EDIT[i]) }
    }
    if (f[2] != "x") continue
    for (i = 1; i <= NW; i++) {
      rel = resolve(WORD[i], DIR)
      if (!starts(rel, top "/") || !mayMatch(1, substr(rel, length(top) + 2))) continue
      if (f[7] == "-" || f[7] == "" || NE || SHELLAMBIG) { close(file); fall("an exclusive lease may cover " WORD[i]) }
    }
  }
  close(file); NL = 0
}
# The time in milliseconds, read once when an answer depends on it: the scripted clock, else date.
function clock(   t) {
  if (MSSET) return NOW
  "date +%s%3N" | getline t; close("date +%s%3N")
  if (length(t) != 13 || t ~ /[^0-9]/) fall("no millisecond clock")
  MSSET = 1; NOW = t + 0
  return NOW
}
# An ISO time as Date.parse reads it (the exact form toISOString writes, or whole seconds), in ms.
# Days 1-31 in any month, as Date.parse in V8 takes them: a day past the end of a month runs on into
# the next (February 30th is March 2nd), and so does the day count below.
function isoMs(s,   y, m, d, era, yoe, doy) {
  if (s !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](\.[0-9][0-9][0-9])?Z$/) fall("scripted clock in another form")
  y = substr(s, 1, 4) + 0; m = substr(s, 6, 2) + 0; d = substr(s, 9, 2) + 0
  if (m < 1 || m > 12 || d < 1 || d > 31 || substr(s, 12, 2) + 0 > 23 || substr(s, 15, 2) + 0 > 59 || substr(s, 18, 2) + 0 > 59) fall("scripted clock out of range")
  if (m <= 2) y--
  era = int(y / 400); yoe = y - era * 400
  doy = int((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  return ((era * 146097 + yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy - 719468) * 86400 + substr(s, 12, 2) * 3600 + substr(s, 15, 2) * 60 + substr(s, 18, 2)) * 1000 + (length(s) == 24 ? substr(s, 21, 3) + 0 : 0)
}
# formatDuration and formatUntil (duration.ts) of a time left, which is positive here.
function dur(ms) {
  if (ms < 1000) return ms "ms"
  if (ms < 120000) return int(ms / 1000 + 0.5) "s"
  if (ms < 7200000) return int(ms / 60000 + 0.5) "m"
  if (ms < 172800000) return int(ms / 3600000 + 0.5) "h"
  return int(ms / 86400000 + 0.5) "d"
}
function until(ms) { return ms >= 1000 ? "in " dur(ms) : "just now" }
# A plain path inside a JSON string: only its double quotes need escaping.
function jesc(s,   out, k) {
  out = ""
  while ((k = index(s, DQ)) > 0) { out = out substr(s, 1, k - 1) "\\" DQ; s = substr(s, k + 1) }
  return out s
}
# The answer text (check.ts answerText: worst first, each with its suggestions) in the words the
# agent reads (agents.ts formatAnswer), as JSON. The pieces from the cache are JSON string text.
function answer(   text, first, v, a, i, left, until_, what, msg, who, pat, nl) {
  text = ""; first = ""; nl = RAW ? "\n" : "\\n"
  for (v = 3; v >= 1; v--) for (a = 1; a <= NA; a++) {
    if (AV[a] != v) continue
    i = ATOP[a]; left = LEXP[i] - clock()
    until_ = "until " jdec(LISO[i]) " (in " dur(left) ")"
    who = jdec(LWHO[i]); pat = jdec(LPAT[i])
    what = LX[i] == "x" ? "inside an exclusive lease on " pat " held by " who " " until_ : LEK[i] == "E" ? "leased by " who " " until_ : "inside " pat ", leased by " who " " until_
    msg = "git-handoff " (v == 3 ? "deny" : v == 2 ? "warn" : "info") ": " (RAW ? AREL[a] : jesc(AREL[a])) " is " what jdec(LWHY[i])
    if (first == "") first = msg
    text = text (text == "" ? "" : nl) msg \
      nl "  wait: wait until " jdec(LAG[i]) " releases it or the lease expires at " jdec(LISO[i]) " (" until(left) ")" \
      nl "  negotiate: " jdec(LNEG[i]) nl "  work_elsewhere: work on another file or task; see who holds what: git handoff leases"
  }
  if (RAW) { print text > "/dev/stderr"; return }
  emit(text, first, WORST == 3)
}
# Whether lease i of another agent no longer stands. Expired by this clock but inside the takeover
# grace (clock skew through a sync remote), it still stands: the full hook words that answer.
function expired(i) {
  if (LEXP[i] > clock()) return 0
  if (LEXP[i] + GRACE > NOW) fall("a lease inside the takeover grace covers a path")
  return 1
}
# The answer for one path (check.ts checkPath), kept in AREL, ATOP, AV when it is not ok.
function holders(rel,   i, r, v, top) {
  if (rel in SEEN) return
  SEEN[rel] = 1; top = 0; v = 0
  for (i = 1; i <= NL; i++) {
    if (!mayMatch(i, rel)) continue
    if (LEK[i] == "-" || LEK[i] == "" || SHELLTOOL) fall("a lease may cover " rel)
    if (!sure(LEK[i], LEA[i], LEB[i], rel) || expired(i)) continue
    r = LX[i] == "x" ? 3 : LEK[i] == "E" ? 2 : 1
    if (r > v) { v = r; top = i }
  }
  if (!top) return
  for (i = 1; i <= NI; i++) if (superset(IK[i], IA[i], IB[i], rel)) fall("the policy may ignore " rel)
  if (MODE == "advisory" && v == 3) v = 2
  NA++; AREL[NA] = rel; ATOP[NA] = top; AV[NA] = v
  if (v > WORST) WORST = v
}
# A piece of JSON string text as the text itself (what stderr gets): the escapes JSON.stringify
# writes for text already neutralised; a lone surrogate is written as U+FFFD, as Buffer.from does.
function jdec(s,   out, k, c, h) {
  if (!RAW) return s
  out = ""
  while ((k = index(s, "\\")) > 0) {
    out = out substr(s, 1, k - 1); c = substr(s, k + 1, 1)
    if (c == "u") {
      h = tolower(substr(s, k + 2, 4))
      if (h !~ /^d[89a-f]/) fall("an escape the answer text cannot hold")
      out = out "\357\277\275"; s = substr(s, k + 6); continue
    }
    out = out (c == "t" ? "\t" : c); s = substr(s, k + 2)
  }
  return out s
}
# The JSON answer each agent reads, from the text and its first line as JSON string text.
function emit(text, first, deny,   j, out) {
  j = DQ text DQ; first = DQ first DQ
  if (READONLY) out = "{\"hookSpecificOutput\":{\"hookEventName\":\"AfterTool\",\"additionalContext\":" j "}}"
  else if (KIND == "claude" || KIND == "codex") {
    if (deny) out = "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":" j "}}"
    else out = "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"additionalContext\":" j "}}"
  }
  else if (KIND == "cursor") out = "{\"permission\":\"" (deny ? "deny" : "allow") "\",\"user_message\":" first ",\"agent_message\":" j "}"
  else if (KIND == "gemini") {
    if (deny) out = "{\"decision\":\"deny\",\"reason\":" j "}"
    else out = "{\"systemMessage\":" first ",\"hookSpecificOutput\":{\"hookEventName\":\"BeforeTool\",\"additionalContext\":" j "}}"
  }
  else fall("no answer format")
  print (READONLY ? "said " : "say ") out
}
# A shell command naming files inside exclusive leases of others (edit-check.ts shellCheck): a warning.
function shellAnswer(   a, i, text, first, msg) {
  text = ""; first = ""
  for (a = 1; a <= NWA; a++) {
    i = WATOP[a]
    msg = "git-handoff warn: this command names " jesc(WAREL[a]) ", inside an exclusive lease on " LPAT[i] " held by " LWHO[i] " until " LISO[i] ": do not change it (reading is fine); ask " LAG[i] " first"
    if (first == "") first = msg
    text = text (text == "" ? "" : "\\n") msg
  }
  emit(text, first, 0)
}
# The payload, read as the full hook reads it (agents.ts): which tool, which paths, where.
function agentInput(   s, line, sep, kind, tool, cwd, t, p, i, keys, text, whole, begin, end) {
  s = ""; sep = ""
  while ((getline line) > 0) { s = s sep line; sep = "\n" }
  R = s; ws()
  if (substr(R, 1, 1) != "{" || !value("", 0, "")) fall("not a JSON object")
  ws(); if (R != "") fall("not JSON")
  kind = ENVIRON["FH_NAME"]; sub(/-.*/, "", kind); KIND = kind
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
    SHELLTOOL = 1
    if (text ~ /apply_?patch/ && (begin = index(text, "*** Begin Patch")) > 0) {
      # It may run a patch (an edit) or not (a word scan): both answers must be no objection.
      whole = substr(text, begin); end = index(whole, "*** End Patch")
      patchPaths(end ? substr(whole, 1, end + 12) : whole)
      # Run as the command itself, it is surely a patch as shell-command.ts reads it: an edit, its words unread.
      if (text ~ /^[ \t\n\r\013\014]*(apply_patch|applypatch)([^A-Za-z0-9_]|$)/) { SHELLTOOL = 0; return }
      SHELLAMBIG = 1
    }
    shellWords(text)
    if (!NE && !NW) { print "quiet"; exit 0 }
    # No word to scan: as a word scan no answer at all, as a patch run an edit and its "ok", which
    # Gemini reads as {} before a tool: the two differ, and only the full hook knows which it is.
    if (SHELLAMBIG && !NW && ENVIRON["FH_NAME"] == "gemini-before-tool") fall("a patch run or a command naming no file")
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
  QLEAD = "^[" SQ DQ "]+"; QTAIL = "[" SQ DQ "]+$"; QANY = "[" SQ DQ "]"
  QSEPD = DQ "[^" DQ "]*[ \t\n\r\013\014;&|()<>`][^" DQ "]*" DQ
  QSEPS = SQ "[^" SQ "]*[ \t\n\r\013\014;&|()<>`][^" SQ "]*" SQ
  srand(); NOW = srand() * 1000
  if (ENVIRON["HANDOFF_NOW"] != "") { NOW = isoMs(ENVIRON["HANDOFF_NOW"]); MSSET = 1 }
  if (mode == "agent") agentInput(); else DIR = ENVIRON["FH_PWD"]
  if (DIR !~ /^\//) fall("relative dir")
  if (NE || NW) earlyLeaseCheck(DIR)
  # Where a path will lead (a symlink on the way sends it to the full hook) needs no repository yet.
  for (i = 1; i <= NE; i++) {
    p = EDIT[i]
    if (isglob(p) || p ~ /^[A-Za-z]:\//) fall("glob or drive path")
    # A trailing slash names a folder (paths.ts makes it folder/**); an extglob is refused there.
    if (p ~ /\/$/ || p ~ /[@!+*?][(]/) fall("a folder or an extglob")
    EABS[i] = resolve(p, DIR); onTheWay(EABS[i])
    upAfterLinks(p)
  }
  for (i = 1; i <= NW; i++) {
    w = WORD[i]
    if (!plain(w) || isglob(w) || w ~ /\\/ || w ~ /^[A-Za-z]:\//) fall("unusual word")
    WABS[i] = resolve(w, DIR); onTheWay(WABS[i])
    upAfterLinks(w)
  }
  # One helper run: the repository, the values the cache is keyed by, symlinks, the staged paths.
  cmd = "set -f; cd " q(DIR) " 2>/dev/null || exit 0\n" \
    "info=$(git rev-parse --path-format=absolute --git-dir --git-common-dir --show-toplevel 2>/dev/null) || exit 0\n" \
    "{ read -r gitdir; read -r common; read -r top; } <<EOF\n$info\nEOF\n" \
    "cache=\"$gitdir/handoff/fast-hook/$FH_KEY\"; [ -f \"$cache\" ] || exit 0\n" \
    "{ read -r v; read -r a; read -r refs; } <\"$cache\" || exit 0\n" \
    "printf \"%s\\n%s\\n%s\\n\" \"$gitdir\" \"$top\" \"$refs\"\n" \
    "st=\"$common/handoff-store.git\"\n" \
    "if [ -f \"$st/HEAD\" ]; then\n" \
    "  for n in ${refs#refs\t}; do case $n in refs/handoff*) printf \"%s\\n\" \"$n\";; esac; done | GIT_DIR=\"$st\" git cat-file --batch-check=%\\(objectname\\) 2>/dev/null\n" \
    "  for n in ${refs#refs\t}; do case $n in refs/handoff*) ;; *) printf \"%s\\n\" \"$n\";; esac; done | git cat-file --batch-check=%\\(objectname\\) 2>/dev/null\n" \
    "else printf \"%s\\n\" ${refs#refs\t} | git cat-file --batch-check=%\\(objectname\\) 2>/dev/null; fi; echo =L\nfor p in"
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
    if (longName(rel)) fall("a path segment longer than a file name can be")
    EREL[i] = rel
  }
  for (i = 1; i <= NW; i++) {
    abs = WABS[i]
    WREL[i] = (length(abs) <= 1024 && starts(abs, top "/")) ? substr(abs, length(top) + 2) : ""
    if (WREL[i] == ".git" || starts(WREL[i], ".git/")) WREL[i] = ""
    # A word no file can be named by is no path to the word scan of the full hook.
    if (longName(WREL[i])) WREL[i] = ""
    # A word ending in a slash is a folder (folder/**): named only where an exclusive lease may overlap it.
    if (WREL[i] != "" && WORD[i] ~ /\/$/) {
      for (j = 1; j <= NL; j++) if (LX[j] == "x" && (LK[j] == "U" || starts(LA[j], WREL[i] "/") || starts(WREL[i] "/", LA[j]))) fall("a folder word an exclusive lease may overlap")
      WREL[i] = ""
    }
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
        if (!(f[k] in STSEEN)) { STSEEN[f[k]] = 1; NST++; STG[NST] = f[k] }
      }
    }
  }
  if (tips != TIPS) fall("refs moved")
  if (mode == "pre-commit" && part != "staged") fall("no diff")
  # The staged paths as the full hook checks them (git-hooks.ts). Only a refused commit is answered
  # here (the full hook that logs the catch afterwards reads the same index, or a copy of the one
  # git passed); a commit that goes on with a warning is for the full hook.
  if (mode == "pre-commit") {
    for (s = 1; s <= NST; s++) holders(STG[s])
    if (!NA) { print "ok"; exit 0 }
    if (WORST != 3) fall("a warning for a commit that goes on")
    RAW = 1; answer()
    print "git-handoff: commit refused: staged files are inside another agent" SQ "s exclusive lease (see above)" > "/dev/stderr"
    print "commit-deny"; exit 0
  }
  # Per path, the answer of check.ts: the first live lease of another agent with the worst verdict
  # (3 deny: exclusive, 2 warn: this very file, 1 info: a folder or glob holding it) names it.
  for (e = 1; e <= NE; e++) holders(EREL[e])
  # A denied edit writes nothing and hears of nothing else: the answer is complete.
  if (WORST == 3 || (WORST && READONLY)) { answer(); exit 0 }
  for (e = 1; e <= NE; e++) {
    rel = EREL[e]
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
  # The words of a command the full hook scans (no patch it may run): the first live exclusive lease
  # of another agent on each names it. A command that may run a patch is only answered when quiet.
  for (e = 1; e <= NW; e++) {
    rel = WREL[e]
    if (rel == "" || (rel in WSEEN)) continue
    WSEEN[rel] = 1; top = 0
    for (i = 1; i <= NL; i++) {
      if (LX[i] != "x" || !mayMatch(i, rel)) continue
      if (LEK[i] == "-" || LEK[i] == "" || NE || SHELLAMBIG) fall("an exclusive lease may cover " rel)
      if (!sure(LEK[i], LEA[i], LEB[i], rel) || expired(i)) continue
      top = i; break
    }
    if (!top) continue
    for (i = 1; i <= NI; i++) if (superset(IK[i], IA[i], IB[i], rel)) fall("the policy may ignore " rel)
    NWA++; WAREL[NWA] = rel; WATOP[NWA] = top
  }
  if (NWA) { shellAnswer(); exit 0 }
  if (NA) answer()
  else print "ok"
}'

case $name in
  claude-pre-tool-use | codex-pre-tool-use | cursor-pre-tool-use | gemini-before-tool | gemini-after-tool | pre-commit) ;;
  *) full "$@" ;;
esac
# The scripted clock is Node's; HANDOFF_FAST_HOOK_CLOCK=1 (a test switch) lets awk read it too.
[ $# -eq 1 ] && [ "${HANDOFF_FAST_HOOK-1}" != 0 ] && { [ -z "${HANDOFF_NOW-}" ] || [ "${HANDOFF_FAST_HOOK_CLOCK-}" = 1 ]; } || full "$@"
if [ -n "${HANDOFF_AGENT-}" ]; then key=a.$HANDOFF_AGENT; elif [ -n "${USER-}" ]; then key=u.$USER; else full "$@"; fi
case $key in *[!A-Za-z0-9._@+-]*) full "$@" ;; esac
[ ${#key} -le 202 ] || full "$@"
cd -P . || full "$@"
FH_NAME=$name FH_KEY=$key FH_PWD=$PWD
export FH_NAME FH_KEY FH_PWD

if [ "$name" = pre-commit ]; then
  verdict=$(LC_ALL=C awk -v mode=pre-commit "$FH_AWK" </dev/null)
  [ "$verdict" = ok ] && exit 0
  if [ "$verdict" = commit-deny ]; then
    # git removes the index it passed (commit -a, a partial commit) once the hook refused: the
    # full hook that logs the catch reads a copy.
    case ${GIT_INDEX_FILE-} in
      "" | index | */index) ;;
      *) copy=$GIT_INDEX_FILE.handoff-$$; cp -- "$GIT_INDEX_FILE" "$copy" 2>/dev/null && GIT_INDEX_FILE=$copy && export GIT_INDEX_FILE || exit 1 ;;
    esac
    afterwards "$@"
    exit 1
  fi
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
centis
waited_from=${C:-none}
# A shell variable cannot hold a NUL byte (the shell drops it from what $(...) reads): each is read
# as \001, which JSON allows nowhere either, so the payload stays invalid to awk and to a full hook.
payload=$(LC_ALL=C $bound "$((t / 1000)).$((t % 1000 / 100))$((t % 100 / 10))$((t % 10))" tr '\000' '\001' && echo .) || full "$@"
case $payload in *.) payload=${payload%.} ;; *) full "$@" ;; esac
read_payload=1
[ ${#payload} -le 4194304 ] || full "$@"
verdict=$(LC_ALL=C awk -v mode=agent "$FH_AWK" <<EOF
$payload
EOF
)
# "No objection" as each agent reads it (agents.ts formatAnswer); "quiet": not an edit, no answer;
# "say": the full hook's deny, warn or info answer, which also logs a catch: once the answer is out,
# the full hook runs on the same input in the background for that (and anything else it does
# after answering), its answer discarded. HANDOFF_HOOK_CATCH_WAIT=1 (a test switch) waits for it.
case $verdict in
  quiet) exit 0 ;;
  "said "*) printf '%s\n' "${verdict#said }"; exit 0 ;;
  "say "*)
    printf '%s\n' "${verdict#say }"
    afterwards "$@"
    exit 0
    ;;
  ok)
    case $name in
      cursor-*) echo '{"permission":"allow"}' ;;
      gemini-before-tool) echo '{}' ;;
    esac
    exit 0
    ;;
esac
full "$@"
