#!/bin/bash
# SPDX-License-Identifier: MIT
# t1001-tree-layers.sh: the tree keeps the dependency rule of docs/architecture.md
# (scripts/check-layers.sh finds no violation), and the check itself catches a planted
# violation and a folder without a row, naming the file and line.
set -u
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t1001

out=$(bash "$SRC/scripts/check-layers.sh" "$SRC") || fail "the tree breaks the layer rule:
$out"

# a copy of the rule over a small planted tree
mkdir -p "$T/docs" "$T/src/common" "$T/src/neff" "$T/src/ingest" "$T/src/extra"
cp "$SRC/docs/architecture.md" "$T/docs/"
printf '#include "common/err.h"\n' > "$T/src/neff/ok.c"
printf '#include "neff/neff.h"\n#include <stdio.h>\n#include "ingest/ingest.h"\n' > "$T/src/neff/bad.c"
printf '#include "neff/neff.h"\n' > "$T/src/ingest/fine.c"
out=$(bash "$SRC/scripts/check-layers.sh" "$T") && fail "planted violations passed"
echo "$out" | grep -qx "src/neff/bad.c:3: neff includes ingest" || fail "violation not named: $out"
echo "$out" | grep -q "src/extra: no row" || fail "a folder without a row passed: $out"
[ "$(echo "$out" | wc -l)" -eq 2 ] || fail "unexpected findings: $out"
echo "ok"
