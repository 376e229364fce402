#!/usr/bin/env bash
# check-layers.sh [ROOT]: checks the dependency rule of docs/architecture.md: a file in
# src/F may include headers of src/F and of the folders that F's row of the table between
# "<!-- layers: begin -->" and "<!-- layers: end -->" names. Every folder of src/ must
# have a row. Prints each violation as "file:line: F includes G" and exits 1 if any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
doc=$root/docs/architecture.md
[ -f "$doc" ] || { echo "check-layers: no $doc" >&2; exit 2; }

declare -A allowed
while IFS='|' read -r _ folder deps _; do
	folder=$(echo "$folder" | tr -d ' ')
	[[ -z $folder || $folder == folder || $folder == ---* ]] && continue
	allowed[$folder]=" $folder $(echo "$deps" | tr -s ' ') "
done < <(sed -n '/<!-- layers: begin -->/,/<!-- layers: end -->/p' "$doc" | grep '^|')
[ "${#allowed[@]}" -gt 0 ] || { echo "check-layers: no layer table in $doc" >&2; exit 2; }

bad=0
for dir in "$root"/src/*/; do
	f=$(basename "$dir")
	if [ -z "${allowed[$f]+x}" ]; then
		echo "src/$f: no row in the layer table of docs/architecture.md"
		bad=1
		continue
	fi
	while IFS=: read -r file line inc; do
		g=${inc#*\"}
		g=${g%%/*}
		[ -d "$root/src/$g" ] || continue # a generated or system header
		if [[ ${allowed[$f]} != *" $g "* ]]; then
			echo "${file#"$root"/}:$line: $f includes $g"
			bad=1
		fi
	done < <(grep -rnE '^#include "[a-z_]+/' "$dir" --include='*.c' --include='*.h' || true)
done
exit $bad
