#!/bin/bash
# t7002-ui-pages.sh: the web UI's pages end to end, in headless Debian Chromium driven by
# playwright-core (tests/ui/pages.mjs), against the real server on a data path with two
# captured device profiles (matmul_v0 with its kernel sources uploaded, matmul_v1 without)
# and a framework trace: profiles page (kinds, filter, pick two), compare page, overview
# (Summary units and descriptions, bounds chart, findings with source lines), source view
# of a finding's line and its link to the timeline, source view without an archive, SQL
# page (paging, CSV, schema browser, examples). First, with curl, the endpoints the pages
# stand on. Screenshots stay in $NX_TEST_TMP/ui-screenshots/pages.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_ui.sh"
ui_setup t7002
SHOTS=${NX_TEST_TMP:-/tmp}/ui-screenshots/pages
mkdir -p "$T/dl" || exit 1

for k in matmul_v0 matmul_v1; do
	"$BIN" kernel gen $k --size 512 -o $k.neff > /dev/null || fail "kernel gen $k"
	NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n $k.neff -s $k.ntff > /dev/null ||
		fail "capture $k"
done
"$BIN" view -n matmul_v0.neff -s matmul_v0.ntff --data-path data --display-name mm-v0 \
	--ingest-only > /dev/null 2>&1 || fail "ingest mm-v0"
"$BIN" view -n matmul_v1.neff -s matmul_v1.ntff --data-path data --display-name mm-v1 \
	--ingest-only > /dev/null 2>&1 || fail "ingest mm-v1"
"$BIN" view -d "$SRC/tests/data/framework-traces/kineto_h100_docs_trace.json" --data-path data \
	--display-name torch-h100 --ingest-only > /dev/null 2>&1 || fail "ingest the framework trace"
"$BIN" upload --source-code "$SRC/kernels" --data-path data --display-name mm-v0 > /dev/null ||
	fail "upload"

ui_serve data

# what the pages stand on: the page routes, the source archive, the compare report
for p in / /profile/mm-v0/source "/profile/mm-v0/source?loc=matmul_v0.py:28" /profile/mm-v0/sql \
	/compare/mm-v0/mm-v1; do
	code=$(curl -s -o page.html -w '%{http_code}' "$UI$p")
	[ "$code" = 200 ] && grep -q 'source.js' page.html || fail "page $p: $code"
done
for f in links.js profiles.js overview.js source.js sql.js compare.js examples.js pages.css; do
	curl -s -o asset "$UI/$f" && cmp -s asset "$SRC/ui/$f" || fail "served $f differs from ui/$f"
done
B="$UI/api/v1/profiles/namespace/global/profile_name"
curl -s "$B/mm-v0/artifacts?types=source-code" | grep -q '"type":"source-code"' || fail "no archive"
curl -s "$B/mm-v1/artifacts?types=source-code" | grep -q '"artifacts":\[\]' || fail "mm-v1 archive"
curl -s "$B/mm-v0/fs/source_folder.tar.gz" | tar -tz | grep -qx 'matmul_v0.py' ||
	fail "the archive lacks matmul_v0.py"
curl -s "$B/mm-v0/analysis?compare=mm-v1" | grep -q '"recommend_compare"' ||
	fail "no compare report"

# the browser
NX_UI_URL="$UI" NX_A=mm-v0 NX_B=mm-v1 NX_FW=torch-h100 NX_SHOTS="$SHOTS" NX_DL="$T/dl" \
	NX_TOOLS="$SRC/tests/tools" NX_CHROMIUM="$CHROMIUM" timeout 300 \
	node "$SRC/tests/ui/pages.mjs" || fail "browser test"
for s in 1-profiles 2-compare 3-overview 4-source 5-source-no-archive 6-sql 7-framework; do
	[ -s "$SHOTS/$s.png" ] || fail "no screenshot $s.png"
done

ui_stop
exit 0
