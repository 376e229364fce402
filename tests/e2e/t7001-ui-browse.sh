#!/bin/bash
# t7001-ui-browse.sh: the web UI end to end. `view` serves the UI (--port 0) beside the
# API (--api-server-port 0) and prints where; the UI port serves the embedded pages and
# the same /api/ routes with the same Host check; a taken UI port is a clear error; then
# headless Debian Chromium driven by playwright-core (tests/ui/browse.mjs) opens the
# profiles page, the profile, zooms the timeline, clicks an instruction, runs SQL.
# Screenshots stay in $NX_TEST_TMP/ui-screenshots.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_ui.sh"
ui_setup t7001
SHOTS=${NX_TEST_TMP:-/tmp}/ui-screenshots

"$BIN" kernel gen matmul_v0 --size 512 -o mm.neff > /dev/null || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n mm.neff -s mm.ntff > /dev/null || fail "capture"
"$BIN" view -n mm.neff -s mm.ntff --data-path data --display-name mm-512 --port 0 \
	--api-server-port 0 > view.out 2> view.err &
pids+=($!)
for _ in $(seq 600); do grep -q "ctrl-c to exit" view.out 2>/dev/null && break; sleep 0.1; done
grep -q "ctrl-c to exit" view.out || fail "view did not start"
UI=$(sed -n 's|^View profile at \(http://localhost:[0-9]*\)/profile/mm-512$|\1|p' view.out)
API=$(sed -n 's|^\(Ready: \)\{0,1\}API server listening on \(http://127.0.0.1:[0-9]*\)/api/v1 .*|\2|p' view.out)
[ -n "$UI" ] && [ -n "$API" ] || fail "view did not print the UI and API URLs"
[ "$UI" != "${API/127.0.0.1/localhost}" ] || fail "UI and API on the same port"
grep -q "no web UI" view.err && fail "view still says it has no UI"

# pages and assets come from the binary; /api/ works on the UI port with the same checks
code=$(curl -s -o index.html -w '%{http_code} %{content_type}' "$UI/profile/mm-512")
[ "$code" = "200 text/html; charset=utf-8" ] || fail "profile page: $code"
grep -q '<canvas\|timeline.js' index.html || fail "index.html lacks the timeline script"
curl -s -D h.txt -o app.js "$UI/app.js" || fail "app.js"
grep -qi "content-type: text/javascript" h.txt || fail "app.js content type"
grep -qi "content-security-policy: default-src 'self'" h.txt || fail "no CSP on UI assets"
cmp -s app.js "$SRC/ui/app.js" || fail "served app.js differs from ui/app.js"
curl -s "$UI/api/v1/health" | grep -q healthy || fail "health on the UI port"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "$UI/")
[ "$code" = 403 ] || fail "UI port answered a foreign Host with $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$UI/nosuch.js")
[ "$code" = 404 ] || fail "missing asset: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$API/")
[ "$code" = 404 ] || fail "the API port serves the UI ($code)"

# the timeline endpoints: tracks, raw rows when zoomed in, buckets when zoomed out
B="$API/api/v1/profiles/namespace/global/profile_name/mm-512"
curl -s "$B/timeline/tracks" > tracks.json || fail "tracks"
grep -q '"instruction",0,"Tensor"' tracks.json || fail "no Tensor track: $(head -c 300 tracks.json)"
grep -q '"dma",0,"q' tracks.json || fail "no DMA queue track"
curl -s "$B/timeline?t0=0&t1=100000&px=2000" > raw.json
grep -q '"bucket":64,' raw.json || fail "bucket for 100000 ns / 2000 px: $(head -c 200 raw.json)"
grep -q '"raw"' raw.json && ! grep -q '"bins"' raw.json || fail "wide view not raw rows"
grep -q '"MATMUL"' raw.json || fail "raw rows lack the MATMUL opcode"
curl -s "$B/timeline?t0=0&t1=100000&px=2" > bins.json
grep -q '"bucket":65536,' bins.json || fail "bucket for 2 px"
grep -q '"bins"' bins.json || fail "2 px view not bucketed"
# the buckets account for every event once, and each shows the longest event it holds
total=$(curl -s -X POST -d '{"type":"databaseExplorerQuery","query":"SELECT (SELECT count(*) FROM Instruction) + (SELECT count(*) FROM DmaPacketAggregated), (SELECT max(duration_ns) FROM Instruction)"}' \
	"$API/api/v1/db/mm-512/_search")
node -e '
const [b, t] = [JSON.parse(require("fs").readFileSync("bins.json")), JSON.parse(process.argv[1])];
let n = 0, longest = 0;
for (const k of ["instruction", "dma"]) for (const r of b[k].tracks) {
	n += r.mode === "bins" ? r.count.reduce((a, x) => a + x, 0) : r.id.length;
	if (k === "instruction") r.dur.forEach((d) => { longest = Math.max(longest, d); });
}
if (n !== t.rows[0][0] || longest !== t.rows[0][1]) { console.error(n, longest, JSON.stringify(t.rows)); process.exit(1); }
' "$total" || fail "bucket counts or representatives do not match the tables"
code=$(curl -s -o err.json -w '%{http_code}' "$B/timeline?t0=5&t1=1.5e3&px=10")
[ "$code" = 400 ] && grep -q bad_request err.json || fail "float bound: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$B/timeline?t0=0&t1=10&px=0")
[ "$code" = 400 ] || fail "px=0: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$API/api/v1/profiles/namespace/global/profile_name/nope/timeline?t0=0&t1=10&px=10")
[ "$code" = 404 ] || fail "unknown profile: $code"

# a taken UI port is reported like a taken API port
uiport=${UI##*:}
"$BIN" view --data-path data --api-server-port 0 --port "$uiport" > v2.out 2> v2.err
[ $? -eq 1 ] || fail "second view on a taken UI port did not exit 1"
grep -q "port $uiport on 127.0.0.1 is already in use.*--port" v2.err || fail "taken port: $(cat v2.err)"
"$BIN" view --data-path data --port x > /dev/null 2>&1; [ $? -eq 2 ] || fail "--port x not a usage error"

# the browser
NX_UI_URL="$UI" NX_PROFILE=mm-512 NX_SHOTS="$SHOTS" NX_TOOLS="$SRC/tests/tools" \
	NX_CHROMIUM="$CHROMIUM" timeout 300 node "$SRC/tests/ui/browse.mjs" || fail "browser test"
for s in 1-profiles 2-profile 3-zoomed-in 4-details 4-timeline 4-selection 5-sql; do
	[ -s "$SHOTS/$s.png" ] || fail "no screenshot $s.png"
done

# ctrl-c stops both servers cleanly (under ASan: no leak or error report)
ui_stop
exit 0
