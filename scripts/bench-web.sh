#!/usr/bin/env bash
# Browser figures for the site: navigation to ready, toggle to new picture on a 5,000-event
# scenario (benches/app-5000.toml), scrub frame times, and the gzip size of the wasm and JS.
# Builds the release site first; `--no-build` reuses dist/ as it is. Always exits 0 once the
# site exists: it is a benchmark, not a test.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

BUILD=1
for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD=0 ;;
        -h|--help)
            echo "usage: scripts/bench-web.sh [--no-build]"
            exit 0
            ;;
        *)
            echo "bench-web.sh: unknown argument $arg" >&2
            exit 2
            ;;
    esac
done

if [ "$BUILD" -eq 1 ]; then
    bash scripts/install.sh
    echo "== trunk build --release =="
    (source scripts/site-env.sh && trunk build --release)
elif [ ! -f dist/index.html ]; then
    echo "bench-web.sh: dist/index.html is missing; run without --no-build" >&2
    exit 1
fi

echo "== bundles and first-view sizes =="
node scripts/bundles.mjs || true

echo "== browser figures =="
node tests/e2e/bench.mjs --dist "$ROOT/dist" || true
