#!/bin/bash
# t5016-server-memory.sh: a profile's database in the server is held to
# NX_SERVER_MEMORY_LIMIT: a query that cannot fit it even spilling gets a 503 memory_limit
# reply naming the limit and the variable, and the server goes on answering; a query that
# fits but not in memory spills (to the database's private folder, removed with the
# server) and answers as without the limit; a value that is not a size is refused by name.
set -u
BIN=${NX_BIN:?NX_BIN not set}
SQL=${NX_BUILD_DIR:?NX_BUILD_DIR not set}/nx-sql
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5016
PIDS=
e2e_cleanup() { for p in $PIDS; do kill -9 $p; done 2> /dev/null; }
P=dp/profiles/global/p@latest
mkdir -p tmp
e2e_million_profile $P
export TMPDIR=$T/tmp
# a user's query beyond the limit runs again under this one (t5017), where the list
# below does not fit either
export NX_SERVER_QUERY_MEMORY_LIMIT=32MB

# serve LIMIT: a server in the background (its output in srv-N.txt), its pid in S, port in PORT
N=0
serve() {
	N=$((N + 1))
	NX_SERVER_MEMORY_LIMIT=$1 e2e_serve srv-$N.txt --data-path dp
}
q() { curl -s -w '\n%{http_code}' -X POST "http://127.0.0.1:$PORT/api/v1/db/p/_search" -H 'Content-Type: application/json' -d "{\"type\":\"databaseExplorerQuery\",\"query\":\"$1\"}"; }
# a sort of every row: spills beyond a small limit
SORT="SELECT sum(hash(id, opcode)), count(*) FROM (SELECT id, opcode FROM Instruction ORDER BY opcode DESC, id DESC)"
# a list of every row in one group: cannot spill
LIST="SELECT length(list(opcode ORDER BY id)) AS n FROM Instruction"

serve 1GB
want_sort=$(q "$SORT")
echo "$want_sort" | tail -1 | grep -qx 200 || fail "the sort without a small limit: $want_sort"
kill $S; wait $S 2> /dev/null

serve 32MB
got=$(q "$SORT")
[ "$got" = "$want_sort" ] || fail "the sort under 32MB answers otherwise: $got (want $want_sort)"
got=$(q "$LIST")
echo "$got" | tail -1 | grep -qx 503 || fail "the list under 32MB: $got"
echo "$got" | grep -q '"code":"memory_limit"' || fail "no memory_limit code: $got"
echo "$got" | grep -q "limit of 32MB per profile (NX_SERVER_MEMORY_LIMIT)" || fail "the limit is not named: $got"
kill -0 $S 2> /dev/null || fail "the server died"
q "SELECT total_time FROM Summary" | grep -q '"rows":\[\[1.5\]\]' || fail "Summary after the error"
kill $S; wait $S 2> /dev/null
[ -z "$(ls -A tmp)" ] || fail "left in TMPDIR: $(ls -A tmp)"

NX_SERVER_MEMORY_LIMIT=lots "$BIN" view --data-path dp --api-server-port 0 --disable-ui > bad.txt 2>&1 &
S=$!
PIDS="$PIDS $S"
PORT=
for _ in $(seq 300); do grep -q "listening" bad.txt && break; sleep 0.1; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/api.*/\1/p' bad.txt)
[ -n "$PORT" ] || fail "server: $(cat bad.txt)"
got=$(q "SELECT total_time FROM Summary")
echo "$got" | grep -q "NX_SERVER_MEMORY_LIMIT is 'lots'" || fail "a bad limit: $got"
exit 0
