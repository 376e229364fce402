#!/usr/bin/env bash
# check-env.sh [ROOT]: checks that every environment variable the code under src/ reads is
# in the table of DEVELOPERS.md between "<!-- env: begin -->" and "<!-- env: end -->", with
# each file that reads it, and that every row names a variable read in each file it lists.
# A variable is read by getenv("NAME"), or, in a file whose getenv takes a name from its
# caller, by a call there whose first argument is "NAME" in capitals (such as
# a helper("NAME", ...)), or by one of common/env_num.h's readers anywhere:
# nx_env_whole, nx_env_whole_or, nx_env_range, nx_env_size or nx_env_size_or("NAME", ...).
# Prints each mismatch, exits 1 if any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
doc=$root/DEVELOPERS.md
[ -f "$doc" ] || { echo "check-env: no $doc" >&2; exit 2; }

declare -A documented # "NAME file" -> 1, from the table
declare -A rows       # NAME -> 1
while IFS='|' read -r _ vars files _; do
	for name in $(echo "$vars" | grep -o '`[A-Za-z_][A-Za-z0-9_]*`' | tr -d '`'); do
		rows[$name]=1
		for f in $(echo "$files" | grep -o '`src/[^`]*`' | tr -d '`'); do
			documented["$name $f"]=1
		done
	done
done < <(sed -n '/<!-- env: begin -->/,/<!-- env: end -->/p' "$doc" | grep '^|')
[ "${#rows[@]}" -gt 0 ] || { echo "check-env: no environment table in $doc" >&2; exit 2; }

declare -A read_in # "NAME file" -> 1, from the code
cd "$root"
while IFS=: read -r file name; do
	read_in["$name $file"]=1
done < <(grep -rnoP --include='*.c' 'getenv\("\K[A-Za-z_][A-Za-z0-9_]*(?="\))' src |
	 awk -F: '{ print $1 ":" $3 }')
# the shared readers of a whole number or a size (common/env_num.h): read where called
while IFS=: read -r file name; do
	read_in["$name $file"]=1
done < <(grep -rnoP --include='*.c' 'nx_env_(?:whole|range|size)(?:_or)?\("\K[A-Z][A-Z0-9_]+(?=")' src |
	 awk -F: '{ print $1 ":" $3 }')
for file in $(grep -rlP --include='*.c' 'getenv\((?!")' src || true); do
	while read -r name; do
		read_in["$name $file"]=1
	done < <(grep -oP '\b(?!getenv)[a-z_][a-z0-9_]*\("\K[A-Z][A-Z0-9_]+(?=")' "$file" | sort -u)
done

bad=0
for key in "${!read_in[@]}"; do
	name=${key%% *}
	file=${key#* }
	if [ -z "${rows[$name]+x}" ]; then
		echo "$file: reads $name, which DEVELOPERS.md's environment table lacks"
		bad=1
	elif [ -z "${documented[$key]+x}" ]; then
		echo "$file: reads $name, but its row in DEVELOPERS.md does not name this file"
		bad=1
	fi
done
for key in "${!documented[@]}"; do
	if [ -z "${read_in[$key]+x}" ]; then
		echo "DEVELOPERS.md: ${key%% *} is not read in ${key#* }"
		bad=1
	fi
done
for name in "${!rows[@]}"; do
	found=0
	for key in "${!documented[@]}"; do
		[ "${key%% *}" = "$name" ] && found=1
	done
	[ $found -eq 1 ] || { echo "DEVELOPERS.md: the row of $name names no file under src/"; bad=1; }
done
exit $bad
