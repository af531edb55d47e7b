// Package tlsfiles builds the server's *tls.Config from PEM files (a
// certificate chain, its private key and, for mutual TLS, the CAs that sign
// client certificates) and picks up new files without a restart.
//
// # What it defends against
//
// Eavesdropping on and tampering with scans in transit, and (with a client
// CA) clients that cannot present a certificate the deployment issued. Only
// TLS 1.2 and 1.3 are offered, with Go's secure cipher suites (grpc's
// credentials.NewTLS also drops those HTTP/2 forbids); a plaintext client
// fails its handshake and never reaches a handler. Under mutual TLS
// the client must present a certificate that chains to a client CA
// (tls.RequireAndVerifyClientCert); turning its subject into an identity is
// server/auth's job.
//
// # Reload
//
// Certificates are short-lived in most deployments (cert-manager, Vault), so
// they rotate while the server runs. Before each TLS handshake the files'
// size and modification time are compared with those last loaded, at most
// once per Options.CheckInterval, which keeps the cost to a few stats a
// second however many clients connect. When a file changed, all of them are
// loaded again and new handshakes use the result; connections already open
// keep the certificate they started with. A file set that does not load (a
// certificate whose new key has not been written yet) is not used: the
// previous certificate keeps serving, Options.OnReload hears the error, and
// the next check tries again. Kubernetes' atomic symlink swap of a mounted
// Secret is seen, because the files are stat'ed through their links.
//
// # What it leaves to the deployment
//
// Issuing, renewing and protecting the files; revocation (no CRL or OCSP is
// checked: keep client certificates short-lived instead); choosing client
// CAs that sign only the clients meant to reach this service.
package tlsfiles
