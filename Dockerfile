# syntax=docker/dockerfile:1
#
# scand's container image: a static binary on distroless, as non-root.
#
#   docker build -t scand:dev --build-arg VERSION=$(git describe --tags --always) .
#
# Base images are pinned by digest, so a rebuild gets the same bytes; the
# tag beside each digest says what it was taken from. To update one:
#   crane digest golang:1.26-bookworm
#   crane digest gcr.io/distroless/static-debian12:nonroot
# (or: docker buildx imagetools inspect IMAGE:TAG, the "Digest:" of the
# index, not of one platform's manifest), replace the digest, rebuild, run
# the e2e suite. Dependabot/Renovate can keep them current (the "docker"
# ecosystem understands TAG@sha256:... lines).
#
# How these two were chosen: this repository's machines cannot pull images,
# so the digests were not resolved here. They are the ones public Dockerfiles
# pinned for the same tags in 2026 (distroless static-debian12:nonroot as of
# 2026-08-26); a digest that does not exist fails the build at FROM, never
# silently. Resolve them again as above before the first release.

ARG GO_IMAGE=golang:1.26-bookworm@sha256:9edf71320ef8a791c4c33ec79f90496d641f306a91fb112d3d060d5c1cee4e20
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab

FROM ${GO_IMAGE} AS build
WORKDIR /src
# The health probe for the pod's exec probes (k8s/base/deployment.yaml):
# the kubelet's own gRPC probe cannot speak TLS. Built from source at a
# fixed version, through the module proxy and checksum database like any
# module.
ARG GRPC_HEALTH_PROBE_VERSION=v0.4.62
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOBIN=/out go install -trimpath -ldflags="-s -w" \
      github.com/grpc-ecosystem/grpc-health-probe@${GRPC_HEALTH_PROBE_VERSION} && \
    mv /out/grpc-health-probe /out/grpc_health_probe
# Modules first: they change less often than the source.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# CGO_ENABLED=0: a static binary, which distroless/static needs (no libc).
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" \
      -o /out/scand ./cmd/scand

# distroless/static: CA certificates (for S3 over HTTPS), tzdata,
# /etc/passwd with nonroot (65532); no shell, no package manager.
FROM ${RUNTIME_IMAGE}
COPY --from=build /out/scand /usr/local/bin/scand
COPY --from=build /out/grpc_health_probe /usr/local/bin/grpc_health_probe
USER 65532:65532
EXPOSE 8815 9090
ENTRYPOINT ["/usr/local/bin/scand"]
CMD ["serve", "--listen=127.0.0.1:8815"]
