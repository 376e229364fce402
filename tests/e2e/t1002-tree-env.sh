#!/bin/bash
# SPDX-License-Identifier: MIT
# t1002-tree-env.sh: every environment variable read under src/ is in DEVELOPERS.md's table
# with the files that read it, and every row is read where it says (scripts/check-env.sh);
# the check itself catches, in a planted tree, a variable without a row, one read through a
# wrapper, one read in a file its row does not name, and a row no code reads.
set -u
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t1002

out=$(bash "$SRC/scripts/check-env.sh" "$SRC") || fail "src/ and DEVELOPERS.md disagree:
$out"

mkdir -p "$T/src/a" "$T/src/b"
cat > "$T/DEVELOPERS.md" <<'DOC'
<!-- env: begin -->
| variable | read in | default | what |
|---|---|---|---|
| `NX_A` | `src/a/a.c` | | |
| `NX_GONE` | `src/a/a.c` | | |
| `NX_W` | `src/a/w.c` | | |
<!-- env: end -->
DOC
printf 'const char *a = getenv("NX_A");\nconst char *n = getenv("NX_NEW");\n' > "$T/src/a/a.c"
printf 'static long size(const char *name) { return atol(getenv(name)); }\n' > "$T/src/a/w.c"
printf 'long w = size("NX_W"), v = size("NX_V");\n' >> "$T/src/a/w.c"
printf 'const char *a = getenv("NX_A");\n' > "$T/src/b/b.c"
out=$(bash "$SRC/scripts/check-env.sh" "$T") && fail "planted mismatches passed"
want="DEVELOPERS.md: NX_GONE is not read in src/a/a.c
src/a/a.c: reads NX_NEW, which DEVELOPERS.md's environment table lacks
src/a/w.c: reads NX_V, which DEVELOPERS.md's environment table lacks
src/b/b.c: reads NX_A, but its row in DEVELOPERS.md does not name this file"
[ "$(echo "$out" | LC_ALL=C sort)" = "$want" ] || fail "findings
  got:  $out
  want: $want"
echo "ok"
