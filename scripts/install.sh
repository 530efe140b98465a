#!/usr/bin/env bash
# Installs every tool the build, the tests and the site need, from crates.io, the
# rustup dist server, Debian's packages and the npm registry only.
# Each step checks what is already there first, so a second run installs nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Tools installed by cargo land in ~/.cargo/bin, and wasm-opt comes from node_modules.
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

TRUNK_VERSION="0.22.1"
WASM_OPT_VERSION="132"

log() { printf '[install] %s\n' "$*"; }

# Commands are captured before matching: with pipefail, "cmd | grep -q" can fail when grep
# stops reading early and the command dies of SIGPIPE.
output_has() {
    local pattern="$1"
    shift
    local out
    out="$("$@" 2>/dev/null || true)"
    grep -Eq -- "$pattern" <<<"$out"
}

# apt-get needs root; a developer who is not root goes through sudo instead.
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

# The wasm-bindgen CLI must match the library version exactly, so it is read from
# Cargo.lock rather than written down a second time.
lock_version() {
    awk -v crate="$1" '
        $0 == "name = \"" crate "\"" { found = 1; next }
        found && /^version = / { gsub(/version = |"/, ""); print; exit }
    ' Cargo.lock
}

# rust-toolchain.toml names the compiler release the bundles were measured with. On a machine
# whose stable toolchain is that release, the name is made to point at it (as a toolchain of its
# own, with its components and targets), so that rustup fetches nothing; otherwise rustup
# installs it. This comes first: every cargo command in this folder runs that toolchain.
ensure_toolchain() {
    local pinned host dir stable
    pinned="$(awk -F'"' '/^channel *=/ { print $2; exit }' rust-toolchain.toml 2>/dev/null || true)"
    if [ -z "$pinned" ] || ! command -v rustup >/dev/null; then
        return 0
    fi
    host="$(rustc +stable -vV 2>/dev/null | awk '/^host:/ { print $2 }')"
    dir="${RUSTUP_HOME:-$HOME/.rustup}/toolchains"
    if [ -n "$host" ] && [ -e "$dir/$pinned-$host" ]; then
        log "skip: rust $pinned (rust-toolchain.toml) is installed"
        return 0
    fi
    stable="$(rustc +stable --version 2>/dev/null | awk '{ print $2 }')"
    if [ "$stable" = "$pinned" ] && [ -d "$dir/stable-$host" ]; then
        log "link: rust $pinned (rust-toolchain.toml) is this machine's stable toolchain"
        ln -s "$dir/stable-$host" "$dir/$pinned-$host"
    else
        log "install: rust $pinned (rust-toolchain.toml)"
        rustup toolchain install "$pinned" --profile minimal --component rust-src,clippy,rustfmt --target wasm32-unknown-unknown
    fi
}
ensure_toolchain

if [ ! -f Cargo.lock ]; then
    log "Cargo.lock missing: generating it"
    cargo generate-lockfile
fi
WASM_BINDGEN_VERSION="$(lock_version wasm-bindgen)"
if [ -z "$WASM_BINDGEN_VERSION" ]; then
    echo "[install] error: no wasm-bindgen entry in Cargo.lock" >&2
    exit 1
fi

# Trunk runs the wasm-bindgen it finds on PATH only when its pin says the same version;
# otherwise it tries to download one and fails here, so a mismatch is caught now.
if [ -f Trunk.toml ]; then
    TRUNK_PIN="$(awk -F'"' '/^wasm_bindgen *=/ { print $2; exit }' Trunk.toml)"
    if [ "$TRUNK_PIN" != "$WASM_BINDGEN_VERSION" ]; then
        echo "[install] error: Trunk.toml pins wasm_bindgen = \"$TRUNK_PIN\" but Cargo.lock has $WASM_BINDGEN_VERSION" >&2
        exit 1
    fi
fi

# What to install: everything (the default); `base`, all but the two tools built from source;
# or `tools`, only those two (wasm-bindgen-cli and Trunk). `./scripts/test.sh` installs the base,
# then builds the tools while its first checks run, because they take most of a first run.
PART="${1:-all}"
case "$PART" in
    all | base | tools) ;;
    *)
        echo "usage: scripts/install.sh [all|base|tools]" >&2
        exit 2
        ;;
esac

install_base() {
    # Rust target and components.
    if output_has '^wasm32-unknown-unknown$' rustup target list --installed; then
        log "skip: rust target wasm32-unknown-unknown already installed"
    else
        log "install: rust target wasm32-unknown-unknown"
        rustup target add wasm32-unknown-unknown
    fi

    # rust-src: the site's bundles compile the standard library from its source (scripts/site-env.sh).
    for component in rustfmt clippy rust-src; do
        if output_has "^${component}(-|$)" rustup component list --installed; then
            log "skip: rustup component ${component} already installed"
        else
            log "install: rustup component ${component}"
            rustup component add "${component}"
        fi
    done

    # The crates the standard library's source depends on, so that offline builds (Trunk's) find
    # them. Fetching is quick when they are all here already, and reads the library's own
    # Cargo.lock, which is complete. RUSTC_BOOTSTRAP because the library's manifest declares
    # unstable cargo features.
    STD_MANIFEST="$(rustc --print sysroot)/lib/rustlib/src/rust/library/Cargo.toml"
    if RUSTC_BOOTSTRAP=1 cargo fetch --manifest-path "$STD_MANIFEST" --quiet; then
        log "ok: the standard library's crates are fetched"
    else
        log "fetching the standard library's crates failed" >&2
        exit 1
    fi

    # Debian's packages, because nothing may download a browser build: Chromium and its driver for
    # the browser tests, a font for `lockstep export --format png`, and etcd, Redis and ZooKeeper,
    # the real lock services `lockstep record` and its tests start.
    deb_installed() {
        [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
    }
    DEBS=(chromium chromium-driver fonts-dejavu-core etcd-server redis-server zookeeper)
    MISSING=()
    for deb in "${DEBS[@]}"; do
        deb_installed "$deb" || MISSING+=("$deb")
    done
    if [ "${#MISSING[@]}" -eq 0 ]; then
        log "skip: ${DEBS[*]} already installed (chromium $(dpkg-query -W -f='${Version}' chromium), etcd $(dpkg-query -W -f='${Version}' etcd-server), redis $(dpkg-query -W -f='${Version}' redis-server), zookeeper $(dpkg-query -W -f='${Version}' zookeeper))"
    else
        # The package lists are refreshed only when they do not know a package yet, or when an
        # install from the lists at hand fails (for example on a superseded version).
        for deb in "${MISSING[@]}"; do
            if ! output_has 'Candidate: [0-9]' apt-cache policy "$deb"; then
                log "apt-get update: the package lists do not know $deb yet"
                $SUDO apt-get update
                break
            fi
        done
        log "install: ${MISSING[*]} (apt)"
        if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${MISSING[@]}"; then
            log "apt-get install failed with the current lists: updating them and retrying"
            $SUDO apt-get update
            $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${MISSING[@]}"
        fi
        # Where services start on install, Debian's etcd-server starts a system etcd. The project
        # starts its own etcd processes and needs none running, so one the package started stops.
        if [[ " ${MISSING[*]} " == *" etcd-server "* ]] && [ -x /etc/init.d/etcd ]; then
            $SUDO /etc/init.d/etcd stop >/dev/null 2>&1 || true
        fi
        # Debian's redis-server starts a system Redis on port 6379 the same way, and enables it
        # at boot; the recorder starts its own on free ports, so it is stopped and disabled.
        if [[ " ${MISSING[*]} " == *" redis-server "* ]]; then
            if [ -x /etc/init.d/redis-server ]; then
                $SUDO /etc/init.d/redis-server stop >/dev/null 2>&1 || true
            fi
            if command -v systemctl >/dev/null 2>&1; then
                $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
            fi
        fi
        # Debian's zookeeper package is the server's classes only (its system service is the
        # separate zookeeperd); should a service have started anyway, it is stopped, since the
        # recorder starts its own servers with java on free ports.
        if [[ " ${MISSING[*]} " == *" zookeeper "* ]] && [ -x /etc/init.d/zookeeper ]; then
            $SUDO /etc/init.d/zookeeper stop >/dev/null 2>&1 || true
        fi
    fi

    # npm packages: wasm-opt (binaryen) for release builds, Playwright for browser tests.
    # A stamp of package.json and package-lock.json inside node_modules tells whether
    # node_modules still matches them.
    npm_stamp() {
        cat package.json package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1
    }
    STAMP_FILE="node_modules/.install-stamp"
    if [ -f "$STAMP_FILE" ] && [ "$(cat "$STAMP_FILE")" = "$(npm_stamp)" ] \
        && [ -x node_modules/.bin/wasm-opt ]; then
        log "skip: node_modules up to date"
    else
        if [ -f package-lock.json ]; then
            log "install: npm ci"
            npm ci --no-audit --no-fund
        else
            log "install: npm install (no package-lock.json yet)"
            npm install --no-audit --no-fund
        fi
        npm_stamp > "$STAMP_FILE"
    fi
    if ! output_has "version ${WASM_OPT_VERSION}( |$)" wasm-opt --version; then
        echo "[install] error: wasm-opt is not version ${WASM_OPT_VERSION}: $(wasm-opt --version)" >&2
        exit 1
    fi

    # Crate sources are fetched here so that Trunk's offline builds find them all.
    log "cargo fetch (no-op when the sources are already cached)"
    cargo fetch --quiet
}

install_tools() {
    # A plain release build of these tools with LTO, one codegen unit and full optimisation takes
    # much longer on two cores; the tools run fast enough without them (Trunk mostly waits on cargo,
    # wasm-bindgen and wasm-opt, and wasm-bindgen's work is seconds either way).
    export CARGO_PROFILE_RELEASE_LTO=false
    export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
    export CARGO_PROFILE_RELEASE_OPT_LEVEL=1
    # Both tools build in one folder kept under target/, so the crates they share (serde, clap,
    # anyhow, …) are compiled once, and a reinstall after a version change reuses the rest.
    TOOLS_TARGET="$ROOT/target/tools"

    installed_version() {
        # Prints the second word of "<tool> --version", or nothing if the tool is missing.
        if command -v "$1" >/dev/null 2>&1; then
            "$1" --version 2>/dev/null | awk 'NR == 1 { print $2 }'
        fi
    }

    if [ "$(installed_version wasm-bindgen)" = "$WASM_BINDGEN_VERSION" ] \
        && [ "$(installed_version wasm-bindgen-test-runner)" = "$WASM_BINDGEN_VERSION" ]; then
        log "skip: wasm-bindgen-cli ${WASM_BINDGEN_VERSION} already installed"
    else
        log "install: wasm-bindgen-cli ${WASM_BINDGEN_VERSION} (takes a few minutes)"
        # The locked build has failed before when a locked dependency was missing from the
        # registry, so an unlocked build is the fallback.
        if ! cargo install --target-dir "$TOOLS_TARGET" wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked --force; then
            log "locked install failed: retrying without --locked"
            cargo install --target-dir "$TOOLS_TARGET" wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
        fi
    fi

    if [ "$(installed_version trunk)" = "$TRUNK_VERSION" ]; then
        log "skip: trunk ${TRUNK_VERSION} already installed"
    else
        log "install: trunk ${TRUNK_VERSION} (takes about eight minutes)"
        # Trunk 0.22 declares a newer rust-version than it needs; it builds with this rustc. Only
        # the features the project uses: TLS (which Trunk will not build without) but no check for
        # updates, as every build here is offline.
        # Unoptimised: Trunk's own work here is small (it runs cargo, wasm-bindgen and
        # wasm-opt, and minifies a few small files), and its many crates compile much faster.
        CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
            cargo install --target-dir "$TOOLS_TARGET" --locked --force trunk --version "$TRUNK_VERSION" --ignore-rust-version \
            --no-default-features --features rustls
    fi
}

if [ "$PART" != tools ]; then
    install_base
fi
if [ "$PART" != base ]; then
    install_tools
fi

if [ "$PART" = base ]; then
    log "done: all but wasm-bindgen-cli and trunk (scripts/install.sh tools installs those)"
    exit 0
fi
log "done: wasm-bindgen ${WASM_BINDGEN_VERSION}, trunk ${TRUNK_VERSION}, wasm-opt ${WASM_OPT_VERSION}, $(chromium --version 2>/dev/null || echo 'chromium ?')"
