#!/bin/bash
# t5017-server-user-sql.sh: a user's SQL (`_search`'s databaseExplorerQuery) that does not
# fit NX_SERVER_MEMORY_LIMIT runs once more under NX_SERVER_QUERY_MEMORY_LIMIT and answers
# as without any limit, while the profile's database (the UI's routes') keeps the smaller
# limit; one beyond the larger limit too gets a 503 memory_limit naming both limits and
# both variables; a second such query while one runs gets a 503 busy; the server goes on
# answering and leaves nothing in TMPDIR; a value of the new variable that is not a size
# is refused by name.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5017
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -9 $p; done 2> /dev/null; }
P=dp/profiles/global/p@latest
mkdir -p tmp
e2e_million_profile $P
export TMPDIR=$T/tmp

q() { curl -s -w '\n%{http_code}' -X POST "http://127.0.0.1:$PORT/api/v1/db/p/_search" -H 'Content-Type: application/json' -d "{\"type\":\"databaseExplorerQuery\",\"query\":\"$1\"}"; }
# needs about 40 MB: beyond 16MB, well within 128MB
DISTINCT="SELECT count(DISTINCT id) AS n FROM Instruction"
# beyond 128MB too: a list of every row's 160 bytes, which cannot spill
WIDE="SELECT length(list(repeat(opcode, 40) ORDER BY id)) AS n FROM Instruction"
# DISTINCT's answer beside 100,000 rows of 200 bytes: a reply that streams for long
# to a slow client, holding the larger database meanwhile
LONG="SELECT * FROM (SELECT count(DISTINCT id) AS n FROM Instruction), (SELECT id, repeat('x', 200) AS pad FROM Instruction LIMIT 100000)"

NX_SERVER_MEMORY_LIMIT=16MB NX_SERVER_QUERY_MEMORY_LIMIT=128MB e2e_serve srv-1.txt --data-path dp
got=$(q "$DISTINCT")
echo "$got" | tail -1 | grep -qx 200 || fail "count(DISTINCT) under 16MB then 128MB: $got"
echo "$got" | grep -q '"rows":\[\[1000000\]\]' || fail "count(DISTINCT) answers otherwise: $got"
# the profile's database, which the UI's routes query, kept its limit
got=$(q "SELECT current_setting('memory_limit') AS m")
echo "$got" | grep -q '"rows":\[\["15.2 MiB"\]\]' || fail "the profile's limit after the retry: $got"
got=$(q "$WIDE")
echo "$got" | tail -1 | grep -qx 503 || fail "beyond both limits: $got"
echo "$got" | grep -q '"code":"memory_limit"' || fail "no memory_limit code: $got"
echo "$got" | grep -q "limit of 16MB per profile (NX_SERVER_MEMORY_LIMIT)" || fail "the base limit is not named: $got"
echo "$got" | grep -q "limit of 128MB for a user's query (NX_SERVER_QUERY_MEMORY_LIMIT)" ||
	fail "the larger limit is not named: $got"
kill -0 $S 2> /dev/null || fail "the server died"
q "SELECT total_time FROM Summary" | grep -q '"rows":\[\[1.5\]\]' || fail "Summary after the error"

# one query at a time under the larger limit: a slow client keeps the first one's reply
# (and its database) open while a second one asks
curl -s --limit-rate 20k -o long.json -X POST "http://127.0.0.1:$PORT/api/v1/db/p/_search" -H 'Content-Type: application/json' \
	-d "{\"type\":\"databaseExplorerQuery\",\"query\":\"$LONG\"}" &
C=$!
PIDS="$PIDS $C"
for _ in $(seq 600); do [ -s long.json ] && break; sleep 0.1; done
[ -s long.json ] || fail "the long reply did not start"
head -c 100 long.json | grep -q '"columns":\[{"name":"n"' || fail "the long reply: $(head -c 300 long.json)"
got=$(q "$DISTINCT")
echo "$got" | tail -1 | grep -qx 503 || fail "a second query beyond 16MB meanwhile: $got"
echo "$got" | grep -q '"code":"busy"' || fail "no busy code: $got"
echo "$got" | grep -q "larger limit of 128MB (NX_SERVER_QUERY_MEMORY_LIMIT)" || fail "busy names no limit: $got"
# a query within the limit does not wait
q "SELECT total_time FROM Summary" | grep -q '"rows":\[\[1.5\]\]' || fail "Summary beside the long reply"
kill $C
wait $C 2> /dev/null
# the larger database goes with the reply: the query then runs again
ok=
for _ in $(seq 100); do
	got=$(q "$DISTINCT")
	echo "$got" | grep -q '"rows":\[\[1000000\]\]' && { ok=1; break; }
	echo "$got" | grep -q '"code":"busy"' || fail "after the long reply: $got"
	sleep 0.2
done
[ -n "$ok" ] || fail "still busy after the long reply ended: $got"
kill $S; wait $S 2> /dev/null
[ -z "$(ls -A tmp)" ] || fail "left in TMPDIR: $(ls -A tmp)"

NX_SERVER_QUERY_MEMORY_LIMIT=lots e2e_serve bad.txt --data-path dp
got=$(q "SELECT total_time FROM Summary")
echo "$got" | grep -q "NX_SERVER_QUERY_MEMORY_LIMIT is 'lots'" || fail "a bad limit: $got"
exit 0
