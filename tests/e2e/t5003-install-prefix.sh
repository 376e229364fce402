#!/bin/bash
# SPDX-License-Identifier: MIT
# t5003-install-prefix.sh: `cmake --install` into a fresh prefix; the installed binary
# runs from there alone (its DuckDB found through its RPATH, no build tree on the path):
# --help, a tiny `kernel gen` + `capture` + `view --ingest-only`, and the documented
# files (licence, docs, kernel sources) are in place; the old name neuron-profile is a
# link beside it whose summary-json a harness-style script reads; a neuron-profile that
# is not our link is kept by a second install.
set -u
BUILD=${NX_BUILD_DIR:?NX_BUILD_DIR not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5003

P=$T/prefix
cmake --install "$BUILD" --prefix "$P" > install.log 2>&1 || { cat install.log; fail "cmake --install"; }
BIN=$P/bin/neuron-explorer
[ -x "$BIN" ] || fail "no $BIN"
[ -f "$P/share/doc/neuron-explorer/LICENSE" ] || fail "LICENSE not installed"
[ -f "$P/share/doc/neuron-explorer/README.md" ] || fail "README not installed"
[ -f "$P/share/neuron-explorer/kernels/matmul_v0.py" ] || fail "kernel sources not installed"
# The binary must not find DuckDB through the build tree or the environment.
env -u LD_LIBRARY_PATH "$BIN" --help > help.txt 2>&1 || { cat help.txt; fail "--help"; }
grep -q "view" help.txt || fail "--help does not list view"
duck=$(env -u LD_LIBRARY_PATH ldd "$BIN" | awk '/libduckdb.so/ {print $3}')
[ -n "$duck" ] && [ -f "$duck" ] || fail "libduckdb.so not found by the installed binary"
# A fetched DuckDB is installed beside the binary and used from there.
if ls "$P"/lib*/neuron-explorer/libduckdb.so > /dev/null 2>&1; then
	case $duck in "$P"/*) ;; *) fail "installed binary uses $duck, not the installed copy";; esac
fi

env -u LD_LIBRARY_PATH "$BIN" kernel gen matmul_v0 --size 512 -o k.neff > /dev/null || fail "kernel gen"
env -u LD_LIBRARY_PATH "$BIN" capture -n k.neff -s k.ntff > /dev/null || fail "capture"
env -u LD_LIBRARY_PATH "$BIN" view -n k.neff -s k.ntff --data-path "$T/data" --display-name inst \
	--ingest-only > view.log 2>&1 || { cat view.log; fail "view --ingest-only"; }
[ -s "$T/data/profiles/global/inst@latest/Instruction.parquet" ] || fail "no Instruction.parquet"

# the NKI shim is installed beside the binary, finds it, and runs a library kernel's source
shim=$(env -u LD_LIBRARY_PATH "$BIN" nki path) || fail "nki path"
[ "$shim" = "$(cd "$P/share/neuron-explorer/nki/python" && pwd -P)" ] || fail "nki path is $shim"
if ${NX_PYTHON:-/usr/bin/python3} -c 'import numpy' 2>/dev/null; then
	env -u LD_LIBRARY_PATH -u NX_NKI_BIN -u PYTHONPATH "$BIN" nki run \
		"$P/share/neuron-explorer/kernels/softmax.py" --entry softmax \
		--input x=256x128:bfloat16 -n s.neff -s s.ntff -q > nki.log 2>&1 ||
		{ cat nki.log; fail "installed nki run"; }
	[ -s s.ntff ] || fail "installed nki run wrote no NTFF"
fi
OLD=$P/bin/neuron-profile
[ -L "$OLD" ] && [ "$(readlink "$OLD")" = neuron-explorer ] || fail "no neuron-profile link"
[ -f "$P/share/doc/neuron-explorer/formats/json.md" ] || fail "docs/formats/json.md not installed"
env -u LD_LIBRARY_PATH "$OLD" view -n k.neff -s k.ntff --output-format summary-json -q > s.json ||
	fail "neuron-profile view from the prefix"
${NX_PYTHON:-/usr/bin/python3} "${NX_SOURCE_DIR:?}/tests/e2e/harness/first_key.py" s.json |
	grep -q '^k [0-9]' || fail "summary-json read by its first key: $(head -c 200 s.json)"
rm "$OLD" && echo "AWS's own tool" > "$OLD"
cmake --install "$BUILD" --prefix "$P" > install2.log 2>&1 || { cat install2.log; fail "second install"; }
[ "$(cat "$OLD")" = "AWS's own tool" ] || fail "an existing neuron-profile was replaced"
# cmake wraps a warning's text at a width, so where its words break depends on the
# prefix's length (this test's PID): the words are matched with the lines joined
tr -s ' \n' '  ' < install2.log | grep -q "is not a link to neuron-explorer: kept" ||
	fail "no warning about the kept file"
echo "PASS"
