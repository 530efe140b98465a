#!/usr/bin/env bash
# Mutation testing of the model and the monitors: cargo-mutants changes one thing at a time in
# src/model/ and src/monitor/ (and their roots src/model.rs and src/monitor.rs) and runs their
# own tests; a change no test notices is "missed". docs/mutation-testing.md explains the output
# and lists the survivors we know of; tests/mutants-justified.md says why each is left alive.
#
#   ./scripts/mutants.sh              # the one-in-four sample the README's figure comes from
#   ./scripts/mutants.sh 2/4          # another quarter (shards count from 0)
#   ./scripts/mutants.sh 0/8 & ./scripts/mutants.sh 4/8 & wait
#                                     # the same quarter as 0/4, in two halves at once
#   ./scripts/mutants.sh all          # every mutant: hours on a two-core machine
#   ./scripts/mutants.sh 0/4 --list   # extra arguments go to cargo-mutants
#
# Not part of ./scripts/test.sh: even a quarter takes over an hour. Results land in
# mutants.out/shard-0-of-4/mutants.out/ (caught.txt, missed.txt, timeout.txt, unviable.txt,
# one log per mutant).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The version the figures in the README and docs/mutation-testing.md were measured with: another
# version may make other mutants.
MUTANTS_VERSION="27.1.0"
if ! cargo mutants --version 2>/dev/null | grep -qx "cargo-mutants $MUTANTS_VERSION"; then
    echo "[mutants] installing cargo-mutants $MUTANTS_VERSION (a few minutes, once)"
    cargo install cargo-mutants --locked --version "$MUTANTS_VERSION"
fi

SHARD="${1:-0/4}"
shift || true
SAMPLE=()
NAME="all"
if [ "$SHARD" != "all" ]; then
    SAMPLE=(--shard "$SHARD" --sharding round-robin)
    NAME="shard-${SHARD/\//-of-}"
fi

# The tests of the model and the monitors, from tests/it: the claims, the mechanisms, the
# monitors on traces written by hand, the verdicts, the majority protocol, the explorer and
# determinism, the snapshots of short traces with their verdicts' words, and the properties
# over generated scenarios that judge the model and the monitors most directly (the verdict
# recounted from the trace by brute force, the model's invariants after every step, lazy lease
# expiries, lost updates, snapshots). They take a few
# seconds, where all of tests/it takes minutes: its lessons, course, app and command-line tests
# build on the same engine but judge other things. Left out of explore:: and majority:: are the
# five slowest searches (over 20 seconds between them): a comparison with a peer model checker,
# the replay of every counterexample, and three searches deep enough to prove or refute a
# majority; the other explorer tests search the same transition function.
TESTS=(
    claims:: mechanisms:: monitors:: verdicts:: model_api:: determinism::
    majority:: explore:: snapshots::
    properties::recount:: properties::every_run_obeys_the_invariants properties::lazy_
    properties::a_lease_that_ends_with_the_run properties::a_late_write_erases
    properties::lost_updates_equal properties::snapshots_agree
    --skip stateright_and_the_explorer_agree
    --skip every_counterexample_replays
    --skip the_explorer_proves_a_majority
    --skip the_explorer_finds_a_second_majority
    --skip the_explorer_finds_two_bare_majorities
)

# cargo-mutants edits the sources it tests, so it works in a copy of the tree, made with its
# file times (tar keeps them): the copy's target/ is then up to date but for this crate, and the first
# build there takes a minute or two instead of a build from nothing. Two samples may run at once,
# each in its own copy.
WORK="${TMPDIR:-/tmp}/lockstep-mutants-$NAME"
OUT="$ROOT/mutants.out/$NAME"
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
echo "[mutants] copying the tree to $WORK"
tar -C "$ROOT" --exclude=./mutants.out --exclude=./node_modules --exclude=./dist -cf - . |
    tar -C "$WORK" -xpf -
trap 'rm -rf "$WORK"' EXIT

# `--test=it` goes to the build as well as to the run (`-C`): otherwise every mutant would
# build every test target, the library's own tests and each binary's among them. The time
# allowed each mutant's tests is set from the unmutated run's (a few mutants make a loop that
# never ends). nice keeps the machine usable. The results land in mutants.out/NAME/mutants.out/.
cd "$WORK"
nice -n 15 cargo mutants \
    -f 'src/model/**' -f src/model.rs -f 'src/monitor/**' -f src/monitor.rs \
    "${SAMPLE[@]}" --in-place --build-timeout 600 -o "$OUT" \
    -C --test=it "$@" \
    -- -- "${TESTS[@]}"
