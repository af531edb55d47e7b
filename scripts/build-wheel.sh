#!/usr/bin/env bash
# Builds the scand Python package as a platform wheel that carries the server
# binary, so that `pip install scand-*.whl` gives scand.serve() and the `scand`
# command without Go:
#
#   bash scripts/build-wheel.sh [OUT_DIR]      # default <repo>/dist; prints the wheel's path last
#
# Steps: a copy of client/python in a temporary directory (the source tree
# stays pure: the editable install of the tests never sees a stale binary);
# `go build` of ./cmd/scand into its src/scand/_bin/ (static, CGO_ENABLED=0,
# -trimpath, version stamped); then hatchling (pinned in
# client/python/requirements-build.txt) builds the wheel, whose build hook
# (client/python/hatch_build.py) includes the binary and tags the wheel
# py3-none-PLATFORM. Works from any directory; exits non-zero on failure.
#
# Environment:
#   PYTHON         an interpreter with hatchling (default: <repo>/.venv-build,
#                  created with requirements-build.txt when missing)
#   SCAND_VERSION  the version the binary reports (default: git describe, else dev)
#   GOOS, GOARCH   the platform to build for (default: this machine's)
#   SCAND_WHEEL_PLATFORM  the wheel's platform tag (default: from GOOS/GOARCH)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/client/python"
OUT="$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)"

command -v go >/dev/null || { echo "build-wheel.sh: go is not on PATH; install Go (see go.mod for the version)" >&2; exit 1; }

if [[ -z "${PYTHON:-}" ]]; then
  VENV="$ROOT/.venv-build"
  PYTHON="$VENV/bin/python"
  want="$(sha256sum "$PKG/requirements-build.txt" | cut -d' ' -f1)"
  if [[ "$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)" != "$want" ]]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$PYTHON" -m pip install --quiet --disable-pip-version-check -r "$PKG/requirements-build.txt"
    echo "$want" >"$VENV/.requirements.sha256"
  fi
fi
PYTHON="$(command -v "$PYTHON")" || { echo "build-wheel.sh: PYTHON=$PYTHON not found" >&2; exit 1; }
case "$PYTHON" in /*) ;; *) PYTHON="$PWD/$PYTHON" ;; esac  # hatchling runs from the staging directory
"$PYTHON" -c 'import hatchling' 2>/dev/null || {
  echo "build-wheel.sh: $PYTHON has no hatchling: pip install -r client/python/requirements-build.txt" >&2; exit 1; }

GOOS="${GOOS:-$(go env GOOS)}"
GOARCH="${GOARCH:-$(go env GOARCH)}"
if [[ -z "${SCAND_WHEEL_PLATFORM:-}" ]]; then
  # The binary is static (CGO_ENABLED=0): on Linux it needs no libc, so the
  # oldest manylinux tag and musllinux are both true.
  case "$GOOS/$GOARCH" in
    linux/amd64)   SCAND_WHEEL_PLATFORM=manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64 ;;
    linux/arm64)   SCAND_WHEEL_PLATFORM=manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64 ;;
    darwin/amd64)  SCAND_WHEEL_PLATFORM=macosx_12_0_x86_64 ;;   # Go 1.26 needs macOS 12
    darwin/arm64)  SCAND_WHEEL_PLATFORM=macosx_12_0_arm64 ;;
    windows/amd64) SCAND_WHEEL_PLATFORM=win_amd64 ;;
    windows/arm64) SCAND_WHEEL_PLATFORM=win_arm64 ;;
    *) echo "build-wheel.sh: no wheel platform tag known for $GOOS/$GOARCH; set SCAND_WHEEL_PLATFORM" >&2; exit 1 ;;
  esac
fi
VERSION="${SCAND_VERSION:-$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)}"

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/scand-wheel.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
cp -R "$PKG/src" "$PKG/pyproject.toml" "$PKG/README.md" "$PKG/hatch_build.py" "$PKG"/requirements-*.txt "$STAGE/"
find "$STAGE/src" -name __pycache__ -type d -prune -exec rm -rf {} +
rm -rf "$STAGE/src/scand/_bin"
mkdir -p "$STAGE/src/scand/_bin"
exe=scand
[[ "$GOOS" == windows ]] && exe=scand.exe

echo "go build ./cmd/scand ($GOOS/$GOARCH, version $VERSION)"
(cd "$ROOT" && CGO_ENABLED=0 GOOS="$GOOS" GOARCH="$GOARCH" \
  go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o "$STAGE/src/scand/_bin/$exe" ./cmd/scand)

echo "hatchling build -t wheel (py3-none-$SCAND_WHEEL_PLATFORM)"
(cd "$STAGE" && SCAND_WHEEL_PLATFORM="$SCAND_WHEEL_PLATFORM" "$PYTHON" -m hatchling build -t wheel -d "$OUT" >/dev/null)
wheel="$(ls -t "$OUT"/scand-*-py3-none-*.whl | head -n1)"
[[ -n "$wheel" ]] || { echo "build-wheel.sh: hatchling wrote no wheel into $OUT" >&2; exit 1; }
echo "$wheel"
