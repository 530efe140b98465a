#!/usr/bin/env bash
# Serves the site with Trunk on this machine only, rebuilding on changes.
# PORT picks another port; extra arguments go to `trunk serve`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/install.sh

export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The bundles' build settings (the standard library built for size): scripts/site-env.sh.
source scripts/site-env.sh

PORT="${PORT:-8080}"
echo "Serving on http://127.0.0.1:${PORT}/ (Ctrl-C stops it)"
# Offline, because Trunk would otherwise try to download tools from a host we cannot reach.
exec trunk serve --address 127.0.0.1 --port "$PORT" --offline "$@"
