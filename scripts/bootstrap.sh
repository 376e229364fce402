#!/usr/bin/env bash
# bootstrap.sh: installs the Debian packages the build, tests and demo need, when
# missing. Safe to run repeatedly; needs root (or sudo) only when something is missing.
set -euo pipefail

pkgs=(build-essential cmake ninja-build pkg-config git curl ca-certificates python3
      libcmocka-dev libmicrohttpd-dev libjansson-dev zlib1g-dev nodejs npm
      clang libclang-rt-dev)
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
