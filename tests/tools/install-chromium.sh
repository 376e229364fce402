#!/usr/bin/env bash
# install-chromium.sh: makes sure Debian's chromium is at /usr/bin/chromium for the UI
# tests (tests/ui/), installing the package when it is missing. Prints the path.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-chromium.sh: /usr/bin/chromium is missing; run 'apt-get install -y chromium' as root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y chromium >/dev/null 2>&1 || {
		apt-get update >/dev/null && apt-get install -y chromium >/dev/null
	}
fi
echo /usr/bin/chromium
