# Sourced by the scripts that build the site's bundles (test.sh, serve.sh, bench-web.sh): how the
# WebAssembly the page downloads is compiled. Not for the native build, nor the browser tests.
#
# Rust's prebuilt standard library is compiled for speed and formats a message for every panic.
# In a page nobody reads that message (a panic stops the module either way), and the formatting
# machinery it keeps alive is a tenth of each bundle. So the bundles rebuild the standard library
# from its source (the rust-src component) at the size-first settings of the `web` profile, and
# a panic stops at once. Both are unstable flags of this stable toolchain, which RUSTC_BOOTSTRAP
# unlocks; scripts/install.sh installs rust-src and fetches the crates the library needs.
#
# The bundles build under target/site: proc-macro2 rebuilds whenever RUSTC_BOOTSTRAP changes, and
# every derive with it, so sharing target/ with `cargo test` would rebuild both on each switch.
export RUSTC_BOOTSTRAP=1
export CARGO_UNSTABLE_BUILD_STD=std,panic_abort
# Legacy symbol names, as the stable channel writes them, are what scripts/bundles.mjs reads; an
# unlocked compiler would otherwise write the v0 form. wasm-opt strips the names either way.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Csymbol-mangling-version=legacy"
# ROOT is the checkout's root: the scripts set it; sourced by hand, it is found from here.
ROOT="${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export CARGO_TARGET_DIR="${ROOT}/target/site"
