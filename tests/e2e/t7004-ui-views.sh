#!/bin/bash
# t7004-ui-views.sh: the web UI's viewers of issue 39 (track groups, flows, the
# dependency chain, the memory view, annotations, the IR hierarchy, names in framework
# bars, compare's stacked timelines) in headless Debian Chromium driven by
# playwright-core (tests/ui/views.mjs), against the real server on a data path with matmul_v0 captured by the simulator (DMA
# trigger notifications on, so Flow has DGE_TRIGGER edges) and three vendored framework
# traces (nested slices, Unix-epoch times, Kineto's nested ops); matmul_v1 beside it to
# compare with.
# Screenshots (1280x720, light and dark) stay in $NX_TEST_TMP/ui-screenshots/views.
set -u
. "${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}/tests/e2e/lib_ui.sh"
ui_setup t7004
SHOTS=${NX_TEST_TMP:-/tmp}/ui-screenshots/views
FT=$SRC/tests/data/framework-traces
mkdir -p dl

"$BIN" kernel gen matmul_v0 --size 512 -o mm.neff > /dev/null || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n mm.neff -s mm.ntff > /dev/null || fail "capture"
"$BIN" view -n mm.neff -s mm.ntff --data-path data --display-name mm-v0 --ingest-only \
	> /dev/null 2>&1 || fail "ingest mm-v0"
"$BIN" kernel gen matmul_v1 --size 512 -o mm1.neff > /dev/null || fail "kernel gen v1"
"$BIN" capture -n mm1.neff -s mm1.ntff > /dev/null || fail "capture v1"
"$BIN" view -n mm1.neff -s mm1.ntff --data-path data --display-name mm-v1 --ingest-only \
	> /dev/null 2>&1 || fail "ingest mm-v1"
for t in ss_chrome69_simple_array.json:fw-nested hta_alexnet_a100.json.gz:fw-epoch \
	tl_h100_bert_small.json.gz:fw-bert; do
	"$BIN" view -d "$FT/${t%%:*}" --data-path data --display-name "${t##*:}" --ingest-only \
		> /dev/null 2>&1 || fail "ingest ${t%%:*}"
done

ui_serve data

NX_UI_URL="$UI" NX_DEV=mm-v0 NX_FW_NESTED=fw-nested NX_FW_EPOCH=fw-epoch NX_FW_THIRD=fw-bert \
	NX_DEV2=mm-v1 NX_SHOTS="$SHOTS" NX_DL="$T/dl" NX_TOOLS="$SRC/tests/tools" \
	NX_CHROMIUM="$CHROMIUM" \
	timeout 600 node "$SRC/tests/ui/views.mjs" || fail "browser test"
for s in groups groups-framework-collapsed framework-names-0.01 flow-offscreen chain notes \
	memory memory-dark timeline-dark hierarchy compare; do
	[ -s "$SHOTS/$s.png" ] || fail "no screenshot $s.png"
done

ui_stop
exit 0
