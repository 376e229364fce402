#!/usr/bin/env bash
# bootstrap.sh [--test]: installs the Debian packages the build and demo need, when
# missing; with --test also what only the tests use (Chromium for the UI tests, Slurm and
# munge for the fleet tests), so that no test runs apt-get itself (two tests running it at
# once would fight over dpkg's lock). Safe to run repeatedly; needs root (or sudo) only
# when something is missing.
set -euo pipefail

pkgs=(build-essential cmake ninja-build pkg-config git curl ca-certificates python3 python3-numpy
      libcmocka-dev libmicrohttpd-dev libjansson-dev zlib1g-dev libzstd-dev nodejs npm
      clang libclang-rt-dev)
# installed as the tests' own scripts would (with recommends: Chromium's fonts)
test_pkgs=()
[ "${1:-}" = --test ] && test_pkgs=(chromium slurm-wlm munge)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The npm client is only needed when it is not already on PATH (e.g. from nodesource).
if command -v npm >/dev/null 2>&1; then
	missing=("${missing[@]/npm}")
	missing=("${missing[@]/nodejs}")
fi
want=()
for p in "${missing[@]}"; do [ -n "$p" ] && want+=("$p"); done
if [ "${#want[@]}" -gt 0 ]; then
	echo "bootstrap: installing ${want[*]}"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi
test_want=()
for p in "${test_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || test_want+=("$p")
done
if [ "${#test_want[@]}" -gt 0 ]; then
	echo "bootstrap: installing ${test_want[*]} (for the tests)"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	[ "${#want[@]}" -gt 0 ] || $SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${test_want[@]}" >/dev/null
fi
