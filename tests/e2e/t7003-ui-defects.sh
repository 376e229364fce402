#!/bin/bash
# t7003-ui-defects.sh: the web UI's second round (issue 39), one regression test per
# defect, in headless Debian Chromium driven by playwright-core (tests/ui/defects.mjs),
# against the real server on a data path with: matmul_v0 captured by the simulator, its
# kernel sources uploaded; three vendored framework traces (ss_chrome69: nested B/E
# slices; hta_alexnet: Unix-epoch times beyond 2^53 ns; tl_h100_bert: Kineto's nested
# ops); a directory of a boot-clock trace (kineto_h100_docs, with its
# baseTimeNanoseconds) beside an epoch one written here, which the ingest aligns; and a
# directory of the NEFF/NTFF pair beside a boot-clock trace, whose clocks do not meet.
# Then the operator table and the small-DMA band.
# Screenshots (zoom levels, light and dark, 1280x720) stay in
# $NX_TEST_TMP/ui-screenshots/defects.
set -u
. "${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}/tests/e2e/lib_ui.sh"
ui_setup t7003
SHOTS=${NX_TEST_TMP:-/tmp}/ui-screenshots/defects
FT=$SRC/tests/data/framework-traces
mkdir -p dl mixed devmix

"$BIN" kernel gen matmul_v0 --size 512 -o mm.neff > /dev/null || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n mm.neff -s mm.ntff > /dev/null || fail "capture"
"$BIN" view -n mm.neff -s mm.ntff --data-path data --display-name mm-v0 --ingest-only \
	> /dev/null 2>&1 || fail "ingest mm-v0"
"$BIN" upload --source-code "$SRC/kernels" --data-path data --display-name mm-v0 > /dev/null ||
	fail "upload"
for t in ss_chrome69_simple_array.json:fw-nested hta_alexnet_a100.json.gz:fw-epoch \
	tl_h100_bert_small.json.gz:fw-bert; do
	"$BIN" view -d "$FT/${t%%:*}" --data-path data --display-name "${t##*:}" --ingest-only \
		> /dev/null 2>&1 || fail "ingest ${t%%:*}"
done
# kineto_h100_docs runs on a boot clock: 88511.388 s, baseTimeNanoseconds 1775078550 s;
# the host trace beside it is on the epoch, at the same moment
cp "$FT/kineto_h100_docs_trace.json" mixed/gpu.trace.json
cat > mixed/host.trace.json <<'EOF'
{"traceEvents":[
{"ph":"X","name":"train_step","ts":1775167061388100,"dur":400,"pid":7,"tid":7},
{"ph":"X","name":"forward","ts":1775167061388150,"dur":120,"pid":7,"tid":7},
{"ph":"X","name":"backward","ts":1775167061388290,"dur":150,"pid":7,"tid":7}]}
EOF
"$BIN" view -d mixed --data-path data --display-name mixed --ingest-only > mixed.out 2>&1 ||
	fail "ingest the mixed clocks: $(cat mixed.out)"
grep -q "mix clocks" mixed.out || fail "the ingest did not say the clocks mix"
cp mm.neff devmix/neff_abc.neff
cp mm.ntff devmix/abc_instid_0_vnc_0.ntff
cp "$FT/kineto_h100_docs_trace.json" devmix/trace.json
"$BIN" view -d devmix --data-path data --display-name devmix --ingest-only > /dev/null 2>&1 ||
	fail "ingest the device profile with a trace"

ui_serve data

NX_UI_URL="$UI" NX_DEV=mm-v0 NX_FW_NESTED=fw-nested NX_FW_EPOCH=fw-epoch NX_FW_THIRD=fw-bert \
	NX_MIXED=mixed NX_DEVMIX=devmix NX_SHOTS="$SHOTS" NX_DL="$T/dl" NX_TOOLS="$SRC/tests/tools" \
	NX_CHROMIUM="$CHROMIUM" timeout 600 node "$SRC/tests/ui/defects.mjs" || fail "browser test"
for s in d1-epoch-search d3-two-clocks d4-drawer d7-source-dma d7-timeline-dma d8-selection \
	dark-device dark-framework zoom-device-3 zoom-framework-3 ops; do
	[ -s "$SHOTS/$s.png" ] || fail "no screenshot $s.png"
done

ui_stop
exit 0
