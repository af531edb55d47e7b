#!/usr/bin/env bash
# Regenerates the Go code for proto/. protoc comes from Debian's
# protobuf-compiler package; protoc-gen-go is pinned to the protobuf module
# version in go.mod so generated code and runtime always match.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v protoc >/dev/null || { apt-get update -qq && apt-get install -y -qq protobuf-compiler; }
version=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
GOBIN="$PWD/.tools/bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@${version}"
files=(proto/scand/v1/scan.proto proto/scand/v1/ticket.proto)
PATH="$PWD/.tools/bin:$PATH" protoc -I proto --go_out=. --go_opt=module=github.com/scand/scand "${files[@]}"
echo "generated ${files[*]/%.proto/.pb.go} with protoc-gen-go ${version}"
