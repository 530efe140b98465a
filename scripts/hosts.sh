#!/usr/bin/env bash
# Runs the mdBook and Docusaurus recipes of docs/embedding.md with the real tools: installs
# mdBook and a Docusaurus site (the classic template) if they are not there yet, lays out a
# book and the site's pages from the doc's code blocks (scripts/hosts-recipes.mjs), builds both
# (`mdbook build`, `npm run build`) and runs tests/e2e/specs/real_hosts.mjs, which serves each
# built host and the Lockstep site on loopback ports of their own and checks in headless
# Chromium that the embed shows its run, is sized, and follows the host's theme switch.
#
# Needs the built site (dist/: trunk build --release) and Node's packages (scripts/install.sh
# base). A second run installs nothing: mdBook stays in ~/.cargo/bin, the Docusaurus site and
# its node_modules in target/hosts/docusaurus.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$ROOT/target/debug:$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

MDBOOK_VERSION="0.4.40"
DOCUSAURUS_VERSION="3.10.2"
HOSTS="$ROOT/target/hosts"
BOOK="$HOSTS/book"
SITE="$HOSTS/docusaurus"

log() { printf '[hosts] %s\n' "$*"; }

if [ ! -f dist/index.html ]; then
    echo "hosts.sh: dist/index.html is missing: build the site first (see README.md)" >&2
    exit 1
fi
if [ ! -d node_modules/playwright-core ]; then
    echo "hosts.sh: node_modules is missing: run 'bash scripts/install.sh base' first" >&2
    exit 1
fi

# The preprocessor the book runs (`lockstep mdbook`), and the CLI the e2e runner checks for.
log "cargo build --bin lockstep"
cargo build --bin lockstep --quiet

# mdBook: Debian's package where Debian has one, otherwise from crates.io. Any 0.4 release
# reads the recipe; its version is printed, and the tests pass their mdBook's page to it.
mdbook_version() { mdbook --version 2>/dev/null | awk '{ print $2 }'; }
if [[ "$(mdbook_version)" == v0.4.* ]]; then
    log "mdbook $(mdbook_version) is installed"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    if [ -n "$(apt-cache policy mdbook 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" { print $2 }')" ]; then
        log "installing mdbook from Debian"
        $SUDO apt-get install -y mdbook
    fi
    if [[ "$(mdbook_version)" != v0.4.* ]]; then
        log "installing mdbook $MDBOOK_VERSION with cargo"
        cargo install mdbook --locked --version "$MDBOOK_VERSION"
    fi
fi

# Docusaurus: the classic template's site and its packages, made once and kept.
installed_docusaurus() {
    node -p "require('$SITE/node_modules/@docusaurus/core/package.json').version" 2>/dev/null || true
}
if [ "$(installed_docusaurus)" = "$DOCUSAURUS_VERSION" ]; then
    log "Docusaurus $DOCUSAURUS_VERSION is installed in ${SITE#"$ROOT"/}"
else
    log "creating a Docusaurus $DOCUSAURUS_VERSION site (classic template) in ${SITE#"$ROOT"/}"
    rm -rf "$SITE"
    mkdir -p "$HOSTS"
    (cd "$HOSTS" && npx --yes "create-docusaurus@$DOCUSAURUS_VERSION" "$(basename "$SITE")" classic --javascript --skip-install)
    (cd "$SITE" && npm install --no-audit --no-fund)
fi

# The recipes, as the doc writes them, on loopback addresses chosen now.
rm -rf "$BOOK"
node scripts/hosts-recipes.mjs "$BOOK" "$SITE"

log "mdbook build ($(mdbook_version))"
mdbook build "$BOOK"

log "npm run build (Docusaurus $(installed_docusaurus))"
(cd "$SITE" && npm run build)

node tests/e2e/run.mjs real_hosts --spec tests/e2e/specs/real_hosts.mjs
