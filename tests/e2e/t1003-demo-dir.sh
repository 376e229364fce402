#!/bin/bash
# SPDX-License-Identifier: MIT
# t1003-demo-dir.sh: scripts/demo.sh replaces its folder on every run, so it refuses a
# DEMO_DIR that holds anything it did not make (a user's folder, a file): exit 2, a message
# naming the folder, every file left as it was. A symbolic link is refused too, even to an
# empty folder. Runs before the demo needs a build.
set -u
SRC=${NX_SOURCE_DIR:?NX_SOURCE_DIR not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t1003

mkdir -p "$T/mine/sub"
echo keep > "$T/mine/notes.txt"
echo keep > "$T/mine/sub/more.txt"
out=$(DEMO_SKIP_BUILD=1 DEMO_DIR="$T/mine" bash "$SRC/scripts/demo.sh" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "a user's folder as DEMO_DIR: exit $rc, want 2 ($out)"
case "$out" in
*"demo: $T/mine exists and was not made by the demo"*) ;;
*) fail "a user's folder as DEMO_DIR: message: $out" ;;
esac
[ "$(cat "$T/mine/notes.txt")$(cat "$T/mine/sub/more.txt")" = keepkeep ] ||
	fail "the user's files changed"
[ ! -e "$T/mine/.neuron-explorer-demo" ] || fail "the demo marked a user's folder"

echo keep > "$T/file"
out=$(DEMO_SKIP_BUILD=1 DEMO_DIR="$T/file" bash "$SRC/scripts/demo.sh" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "a file as DEMO_DIR: exit $rc, want 2 ($out)"
[ "$(cat "$T/file")" = keep ] || fail "the file as DEMO_DIR changed"
# a symbolic link, even to an empty folder: the link and its target stay as they were
mkdir "$T/empty"
ln -s "$T/empty" "$T/link"
out=$(DEMO_SKIP_BUILD=1 DEMO_DIR="$T/link" bash "$SRC/scripts/demo.sh" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "a symbolic link as DEMO_DIR: exit $rc, want 2 ($out)"
case "$out" in
*"demo: $T/link is a symbolic link"*) ;;
*) fail "a symbolic link as DEMO_DIR: message: $out" ;;
esac
[ -L "$T/link" ] && [ "$(readlink "$T/link")" = "$T/empty" ] ||
	fail "the user's symbolic link was replaced"
[ -z "$(ls -A "$T/empty")" ] || fail "the demo wrote into the link's empty target"
echo "ok"
