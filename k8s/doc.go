// Package k8s holds scand's Kubernetes manifests and their offline checks.
//
// The manifests are a kustomize base (base/: Deployment, headless Service,
// ServiceAccount, ConfigMap, HPA, PodDisruptionBudget, NetworkPolicy),
// placeholder Secrets for a try-out (secrets-example/), and overlays
// (overlays/example: namespace, image, S3 with IRSA, replica range;
// overlays/servicemonitor: the example plus a Prometheus Operator
// ServiceMonitor). docs/kubernetes.md says how to deploy them.
//
// The package has no Go API: it exists for its test, which needs no
// cluster. The test builds every kustomization with kustomize's Go API
// (sigs.k8s.io/kustomize/api/krusty), decodes each object strictly into
// the k8s.io/api type of its kind (an unknown or misspelt field, a
// duplicate key or an unexpected kind fails), and checks the rules the
// deployment depends on:
//
//   - readiness, liveness and startup probes present and different from
//     each other; readiness asks gRPC health on the Flight port, over TLS
//     when scand serves TLS (the kubelet's grpc probe cannot, so an exec
//     of grpc_health_probe); liveness on the metrics port;
//   - a preStop hook, and a termination grace period covering it plus
//     scand's 10 s stop grace plus a margin;
//   - CPU and memory requests and a memory limit, derived from --io-memory;
//   - a restricted securityContext: non-root, read-only root filesystem,
//     no privilege escalation, every capability dropped, RuntimeDefault
//     seccomp;
//   - topology spread across nodes and zones; a PodDisruptionBudget; a
//     headless Service; an HPA owning the replica count; a NetworkPolicy
//     that admits the Flight port;
//   - every file a flag names is mounted, and where the overlay has the
//     Secret, the Secret has that key; the base creates no Secret;
//   - the container's args and environment parse with `scand serve`'s real
//     flag set: the test builds cmd/scand and runs it, first with --help
//     appended (exit 0 only when everything before it parsed), then for
//     real, with the mounted files replaced by generated ones and the
//     ports by free ones, until gRPC health answers SERVING over TLS, and
//     stops it with SIGTERM. -short skips the binary.
package k8s
