#!/usr/bin/env bash
# Installs the external servers scand's tests run against, into
# <repo>/.tools/bin, built from source with `go install` (no prebuilt
# downloads):
#   versitygw  v1.8.0   an S3-compatible gateway over a local directory
#                       (storage/s3 tests talk real S3 to it)
#   server     v2.12.0  toxiproxy's proxy server (fault tests: latency,
#                       connection resets, bodies cut mid-transfer)
#   cli        v2.12.0  toxiproxy's command-line client (for poking by hand)
#
# Idempotent: a tool is skipped when its binary exists and its stamp file
# (.tools/stamps/NAME) names the pinned version; bump a version below to
# reinstall. Works from any directory; exits non-zero on the first failure.
#
#   bash scripts/install-tools.sh
#
# Tests find versitygw through $SCAND_VERSITYGW or .tools/bin/versitygw, and
# toxiproxy through $SCAND_TOXIPROXY or .tools/bin/server; without them they
# skip and say to run this script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
STAMPS="$ROOT/.tools/stamps"
mkdir -p "$BIN" "$STAMPS"

# The toxiproxy module's @latest resolves to an old v2.5.0 (later tags are
# not seen as newer by the proxy), so every version here is pinned.
VERSITYGW_VERSION=v1.8.0
TOXIPROXY_VERSION=v2.12.0

# install NAME PACKAGE VERSION: go install PACKAGE@VERSION into $BIN, unless
# $BIN/NAME is already there at VERSION.
install() {
  local name=$1 pkg=$2 version=$3
  local stamp="$STAMPS/$name"
  if [[ -x "$BIN/$name" && "$(cat "$stamp" 2>/dev/null || true)" == "$pkg@$version" ]]; then
    echo "$name: $pkg@$version already installed in $BIN"
    return
  fi
  echo "$name: go install $pkg@$version -> $BIN/$name"
  local start=$SECONDS
  GOBIN="$BIN" go install "$pkg@$version"
  echo "$pkg@$version" >"$stamp"
  echo "$name: installed in $((SECONDS - start)) s"
}

install versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"
install server github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION"
install cli github.com/Shopify/toxiproxy/v2/cmd/cli "$TOXIPROXY_VERSION"
echo "tools ready in $BIN"
