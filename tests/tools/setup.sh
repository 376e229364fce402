#!/usr/bin/env bash
# setup.sh: installs the test-only tools from the npm registry into tests/tools/node_modules:
# hyparquet, an independent parquet reader used to cross-check our files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/hyparquet-compressors" ]; then
	(cd "$here" && npm install --no-audit --no-fund --silent >/dev/null)
fi
# playwright-core drives the system Chromium in the UI tests (tests/ui/); it never downloads browsers.
if [ ! -d "$here/node_modules/playwright-core" ]; then
	(cd "$here" && npm install --no-audit --no-fund --silent >/dev/null)
fi
