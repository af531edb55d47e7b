#!/usr/bin/env bash
# Installs the external servers scand's tests run against, into
# <repo>/.tools/bin, built from source with `go install` (no prebuilt
# downloads):
#   versitygw  v1.8.0   an S3-compatible gateway over a local directory
#                       (storage/s3 tests talk real S3 to it)
#   server     v2.12.0  toxiproxy's proxy server (fault tests: latency,
#                       connection resets, bodies cut mid-transfer)
#   cli        v2.12.0  toxiproxy's command-line client (for poking by hand)
#   fake-gcs-server v1.56.0  a Google Cloud Storage emulator (storage/gcs
#                       tests and e2e talk the GCS JSON API to it)
# and, with npm, into <repo>/.tools/azurite:
#   azurite    3.37.0   Microsoft's Azure Storage emulator; its blob service
#                       (.tools/azurite/node_modules/.bin/azurite-blob) is what
#                       storage/azure tests and e2e talk to. Needs Node.js 18+;
#                       without npm it is skipped with a warning (its tests skip).
#
# Idempotent: a tool is skipped when its binary exists and its stamp file
# (.tools/stamps/NAME) names the pinned version; bump a version below to
# reinstall. Works from any directory; exits non-zero on the first failure.
#
#   bash scripts/install-tools.sh
#
# Tests find versitygw through $SCAND_VERSITYGW or .tools/bin/versitygw, and
# toxiproxy through $SCAND_TOXIPROXY or .tools/bin/server, fake-gcs-server
# through $SCAND_FAKE_GCS or .tools/bin/fake-gcs-server, and Azurite through
# $SCAND_AZURITE or .tools/azurite/node_modules/.bin/azurite-blob; without
# them they skip and say to run this script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
STAMPS="$ROOT/.tools/stamps"
mkdir -p "$BIN" "$STAMPS"

# The toxiproxy module's @latest resolves to an old v2.5.0 (later tags are
# not seen as newer by the proxy), so every version here is pinned.
VERSITYGW_VERSION=v1.8.0
TOXIPROXY_VERSION=v2.12.0
FAKE_GCS_VERSION=v1.56.0
AZURITE_VERSION=3.37.0

# Every pinned tool is also kept in a per-user cache, one folder per tool and version
# ($SCAND_TOOLS_CACHE, default ~/.cache/scand-tools), so that a fresh clone on a
# machine that has installed it once copies it instead of building or
# downloading it again. A version bump is a new folder.
CACHE="${SCAND_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scand-tools}"

# install NAME PACKAGE VERSION: go install PACKAGE@VERSION into $BIN, unless
# $BIN/NAME is already there at VERSION.
install() {
  local name=$1 pkg=$2 version=$3
  local stamp="$STAMPS/$name" cached="$CACHE/$name@$version"
  if [[ -x "$BIN/$name" && "$(cat "$stamp" 2>/dev/null || true)" == "$pkg@$version" ]]; then
    echo "$name: $pkg@$version already installed in $BIN"
    return
  fi
  local start=$SECONDS
  if [[ ! -x "$cached/$name" ]]; then
    echo "$name: go install $pkg@$version -> $cached/$name"
    mkdir -p "$cached"
    GOBIN="$cached" go install "$pkg@$version"
  fi
  cp "$cached/$name" "$BIN/$name.tmp" && mv "$BIN/$name.tmp" "$BIN/$name"
  echo "$pkg@$version" >"$stamp"
  echo "$name: $pkg@$version in $BIN ($((SECONDS - start)) s)"
}

install versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"
install server github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION"
install cli github.com/Shopify/toxiproxy/v2/cmd/cli "$TOXIPROXY_VERSION"
install fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION"

# Azurite is a Node.js package: npm installs it, pinned, into its own prefix
# (no global install), with the same stamp rule as above.
install_azurite() {
  local dir="$ROOT/.tools/azurite" stamp="$STAMPS/azurite"
  if [[ -x "$dir/node_modules/.bin/azurite-blob" && "$(cat "$stamp" 2>/dev/null || true)" == "azurite@$AZURITE_VERSION" ]]; then
    echo "azurite: azurite@$AZURITE_VERSION already installed in $dir"
    return
  fi
  if ! command -v npm >/dev/null; then
    echo "azurite: npm not found; skipped (install Node.js 18+ to run the Azure tests)" >&2
    return
  fi
  local start=$SECONDS cached="$CACHE/azurite@$AZURITE_VERSION"
  if [[ ! -x "$cached/node_modules/.bin/azurite-blob" ]]; then
    echo "azurite: npm install azurite@$AZURITE_VERSION -> $cached"
    rm -rf "$cached.tmp"
    mkdir -p "$cached.tmp"
    npm install --prefix "$cached.tmp" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION"
    rm -rf "$cached"
    mv "$cached.tmp" "$cached"
  fi
  # npm's .bin entries are relative links, so the tree is linked, not copied.
  rm -rf "$dir"
  ln -s "$cached" "$dir"
  echo "azurite@$AZURITE_VERSION" >"$stamp"
  echo "azurite: azurite@$AZURITE_VERSION in $dir ($((SECONDS - start)) s)"
}
install_azurite
echo "tools ready in $BIN"
