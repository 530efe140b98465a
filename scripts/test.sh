#!/usr/bin/env bash
# The full check: formatting, lints, native tests, browser tests in headless Chromium and a
# release build of the site. Any failure stops the run with a non-zero exit code.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Every figure the run prints counts from here, installs included.
START_TIME=$SECONDS

# Everything but the two tools built from source (wasm-bindgen-cli and Trunk) is installed first;
# those two take most of a first run on a new machine, so they build in the background while
# the native checks run, and the steps that need them wait for them.
bash scripts/install.sh base

export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# The runner also gets this from .cargo/config.toml; exporting it covers direct runner calls.
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
# Colour codes would make the test summary lines harder to read back from the logs.
export CARGO_TERM_COLOR=never

LOG_DIR="$(mktemp -d)"

# A full run from a clean clone builds about 2.5 GB; a disk that fills mid-build fails with a
# compiler error that hides the cause, so say it up front.
FREE_KB=$(df -Pk "$ROOT" | awk 'NR == 2 { print $4 }')
if [ "${FREE_KB:-0}" -lt $((4 * 1024 * 1024)) ]; then
    echo "test.sh: warning: only $((FREE_KB / 1024)) MB free under $ROOT; a full run needs about 2.5 GB" >&2
fi
STEP="start"

TOOLS_LOG="$LOG_DIR/tools.txt"
# A session of its own, so that a run that fails early can stop the whole build.
setsid bash scripts/install.sh tools >"$TOOLS_LOG" 2>&1 &
TOOLS_PID=$!

# Adds up the "test result:" lines of every cargo test run so far.
totals() {
    cat "$LOG_DIR"/*.log 2>/dev/null | awk '
        /^test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) ~ /^passed/)  passed  += $i
                if ($(i + 1) ~ /^failed/)  failed  += $i
                if ($(i + 1) ~ /^ignored/) ignored += $i
            }
        }
        END { printf "%d passed, %d failed, %d skipped\n", passed, failed, ignored }
    '
}

# Repeats every "test result:" line, each after the test binary it belongs to.
print_results() {
    echo
    echo "== cargo test summary lines =="
    local log found=0
    for log in "$LOG_DIR"/*.log; do
        [ -f "$log" ] || continue
        found=1
        awk -v run="$(basename "$log" .log)" '
            /^ +Running / { name = $0; sub(/^ +Running /, "", name); sub(/ \(.*$/, "", name) }
            /^ +Doc-tests / { name = "doc-tests " $2 }
            /^test result:/ { printf "[%s] %s: %s\n", run, name, $0 }
        ' "$log"
    done
    if [ "$found" -eq 0 ]; then
        echo "(no cargo test ran)"
    fi
}

on_exit() {
    local rc=$?
    # A run that fails before the tools are built stops their build too.
    if [ -n "${TOOLS_PID:-}" ] && kill -0 "$TOOLS_PID" 2>/dev/null; then
        kill -- "-$TOOLS_PID" 2>/dev/null || kill "$TOOLS_PID" 2>/dev/null || true
    fi
    if [ "$rc" -ne 0 ]; then
        print_results
        echo
        echo "test.sh: FAILED at step '$STEP' (exit $rc) after $((SECONDS - START_TIME)) s"
        echo "FAILED: $(totals)"
    fi
    rm -rf "$LOG_DIR"
}
trap on_exit EXIT

step() {
    STEP="$1"
    echo
    echo "== $STEP == (at $((SECONDS - START_TIME)) s)"
}

# Runs cargo test and keeps its output, so the summary lines can be added up at the end.
run_tests() {
    local name="$1"
    shift
    "$@" 2>&1 | tee "$LOG_DIR/$name.log"
    # A run that compiled nothing runnable would print no summary line; that is a failure.
    if ! grep -q '^test result:' "$LOG_DIR/$name.log"; then
        echo "no 'test result:' line in the output of: $*" >&2
        return 1
    fi
}

step "cargo fmt --all -- --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

# src/web exists only on wasm32: lint what ships, too.
step "cargo clippy --target wasm32-unknown-unknown --all-targets -- -D warnings"
cargo clippy --target wasm32-unknown-unknown --all-targets -- -D warnings

step "cargo test (native)"
run_tests native cargo test

# The native tests start real etcd processes (tests/it/reality.rs), each with its data under a
# temporary folder named lockstep-…: none may outlive them, whether they passed or not.
step "no etcd process left by the tests"
if pgrep -af 'etcd .*--data-dir [^ ]*/lockstep-'; then
    echo "etcd processes were left running by the tests (listed above)" >&2
    exit 1
fi

# The browser tests and the site need the two tools, but their Rust compiles do not: they run
# now, beside the tools' build, so that both cores stay busy. Trunk then finds every bundle
# built (the same command it runs, one bundle at a time).
step "cargo test --target wasm32-unknown-unknown --no-run (while the tools build)"
cargo test --target wasm32-unknown-unknown --test wasm --test wasm_app --no-run

# The site's bundles build with their own settings and under target/site (scripts/site-env.sh);
# a subshell keeps those settings away from the other steps.
site() { (source scripts/site-env.sh && "$@"); }

BUNDLES=()
while read -r bin; do BUNDLES+=(--bin "$bin"); done < <(grep -o 'data-bin="[a-z_]*"' index.html | cut -d'"' -f2)
step "cargo build --profile web ${BUNDLES[*]} (the site's bundles, while the tools build)"
site cargo build --target=wasm32-unknown-unknown --manifest-path "$ROOT/Cargo.toml" --profile web --offline "${BUNDLES[@]}"

step "wasm-bindgen-cli and trunk (built in the background since the start)"
if ! wait "$TOOLS_PID"; then
    cat "$TOOLS_LOG"
    echo "installing wasm-bindgen-cli or trunk failed (its output is above)" >&2
    exit 1
fi
TOOLS_PID=""
grep '^\[install\]' "$TOOLS_LOG" || true

step "cargo test --target wasm32-unknown-unknown --test wasm --test wasm_app (headless Chromium)"
run_tests wasm cargo test --target wasm32-unknown-unknown --test wasm --test wasm_app

step "trunk build --release"
site trunk build --release

# What each bundle links and what each first view downloads (scripts/bundles.mjs): sizes are
# deterministic, so this is a check, not a timing.
step "bundle contents and first-view budgets"
node scripts/bundles.mjs --check

step "end-to-end tests (Playwright, headless Chromium)"
# The tests compare the page's verdicts with the CLI's, so the CLI must be built. The native
# tests built it already (target/debug/lockstep); `cargo build --bin lockstep` would build every
# crate again, without the test dependencies' features, which costs minutes on a new machine.
cargo test --no-run --quiet
run_tests e2e node tests/e2e/run.mjs

STEP="summary"
print_results
echo
echo "test.sh: fmt, clippy, native tests, browser tests, release site build, bundle budgets and end-to-end tests all passed in $((SECONDS - START_TIME)) s"
echo "summary: $(totals)"
