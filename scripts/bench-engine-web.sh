#!/usr/bin/env bash
# The engine benchmark natively (`cargo bench --bench engine`) and compiled to WebAssembly in
# headless Chromium (`tests/wasm_bench.rs`, release build), then the wasm/native ratio of the
# events per second (median and best run), with and without the verdict (goal: 0.5 or
# better). A benchmark, not a test: scripts/test.sh does not run it, and it exits 0 whatever
# the figures once both sides have run. Needs the tools of scripts/install.sh
# (wasm-bindgen-test-runner, Chromium, chromedriver).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export CARGO_TERM_COLOR=never

case "${1:-}" in
    "") ;;
    -h|--help)
        echo "usage: scripts/bench-engine-web.sh"
        exit 0
        ;;
    *)
        echo "bench-engine-web.sh: unknown argument $1" >&2
        exit 2
        ;;
esac

for tool in wasm-bindgen-test-runner "$CHROMEDRIVER"; do
    if ! command -v "$tool" >/dev/null; then
        echo "bench-engine-web.sh: $tool is missing; run scripts/install.sh first" >&2
        exit 1
    fi
done

echo "== native: cargo bench --bench engine =="
NATIVE="$(cargo bench --bench engine)"
echo "$NATIVE"

echo
echo "== wasm32 in headless Chromium: cargo test --release --test wasm_bench =="
WEB="$(cargo test --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture 2>&1)"
# Only the figures: the runner's own chatter (test names, timings) is left out.
grep -E "busy scenario:|simulate( \+ verdict)?: median|test result:" <<<"$WEB" | sed -E 's/^[[:space:]]+//'

# A figure of a line such as "simulate: median 5.9 million events/s, best 6.5 (over 9 runs)":
# figure LABEL median|best.
figure() {
    grep -E "^[[:space:]]*$1: median" | head -n 1 |
        sed -E "s/.*$2 ([0-9.]+).*/\1/"
}

echo
echo "== wasm/native events per second (goal 0.5 or better) =="
# Both the medians and the best runs are set side by side: on a shared machine the best runs
# are the steadier estimate of what each side can do undisturbed.
for label in "simulate" "simulate \+ verdict"; do
    name="${label//\\/}"
    for which in median best; do
        native="$(figure "$label" "$which" <<<"$NATIVE")"
        web="$(figure "$label" "$which" <<<"$WEB")"
        if [ -z "$native" ] || [ -z "$web" ]; then
            echo "$name ($which): a figure is missing (native '${native}', wasm '${web}')"
            continue
        fi
        awk -v n="$native" -v w="$web" -v l="$name ($which):" \
            'BEGIN { printf "%-29s native %5.1f M/s   wasm %5.1f M/s   ratio %.2f\n", l, n, w, (n > 0 ? w / n : 0) }'
    done
done
