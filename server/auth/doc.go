// Package auth establishes who is making each call to scand, and which
// files that identity may read.
//
// # Authentication
//
// A Guard's interceptors run before every handler (unary and streaming:
// GetFlightInfo, DoGet, ListFlights, DoAction, Handshake...) and put the
// caller's Identity in the handler's context (FromContext). One mode is
// active at a time (--auth):
//
//   - none: every call is Anonymous (None). For a trusted network only.
//   - tokens: "authorization: Bearer <token>", where the token is listed,
//     as its SHA-256, in the identities file (Tokens). The Flight Handshake
//     trades Basic user:password (bcrypt-hashed in the same file) for a
//     bearer token in the response's authorization header, as arrow-go's
//     and pyarrow's authenticate_basic_token expect. That token is a
//     ticketsign envelope (kind: bearer token; identity; expiry, default an
//     hour) signed with the deployment's ticket key ring, so every replica
//     that shares --ticket-key-file accepts it: no session state, nothing
//     to replicate. A token's identity must still be in the identities file
//     when it is used.
//   - jwt: "authorization: Bearer <JWT>" (JWT), verified with
//     github.com/go-jose/go-jose/v4 against a JWKS file of public keys
//     (RS*, PS*, ES*, EdDSA; a kid is required; a key that declares an
//     alg verifies that alg only) or an HS256 shared secret
//     (only HS256 then, so a public key can never pass as an HMAC secret).
//     iss must match, aud must include the configured audience, exp is
//     required, nbf and iat are checked, all with 30 s of leeway. The
//     identity is the sub claim.
//   - mtls: the subject of the verified client certificate (MTLS), as
//     pkix.Name.String() writes it, e.g. "CN=alice,O=Example". Needs TLS
//     with a client CA (server/tlsfiles), which refuses unverified clients
//     during the TLS handshake.
//
// Every rejection is UNAUTHENTICATED with a message saying what to send.
// The gRPC health service may be exempted (HealthMethods) so Kubernetes
// probes need no credentials; it reveals only whether the server serves.
//
// # Authorization
//
// Each identity has roots (package scope): prefixes of names under --root,
// and s3://bucket/prefix/, gs://bucket/prefix/ or az://container/prefix/. The identities file lists them per identity, by
// the same name whatever the mode (the sub of a JWT, the subject of a
// certificate). An identity the file does not list may read nothing. The
// server checks every resolved name against the scope and filters expanded
// globs with it, so files outside the scope look absent.
//
// # The identities file
//
// YAML (or JSON, which is YAML), parsed strictly: an unknown field, a
// repeated name or token hash, a malformed hash or a bad root is an error,
// so a typo cannot widen or silently drop access.
//
//	identities:
//	  - name: alice
//	    # SHA-256, hex, of each bearer token alice may send. Tokens must be
//	    # long random strings (openssl rand -base64 32), not starting with
//	    # "scand1." (the Handshake's tokens do):
//	    #   printf %s "$TOKEN" | sha256sum
//	    token_sha256:
//	      - 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	    # bcrypt hash of alice's password, for Basic in the Handshake:
//	    #   htpasswd -nbBC 10 "" "$PASSWORD" | cut -c2-
//	    password_bcrypt: "$2a$10$CzBYcSfI1.ZFcIIV8CTS5OvG6oi6bDG323nharjes9yeYIOyORX8a"
//	    roots:
//	      - events/2026/          # under --root
//	      - s3://analytics/team-a/
//	  - name: "CN=etl,O=Example"  # a client certificate's subject (--auth mtls)
//	    roots: ["."]              # all of --root
//
// # What it defends against
//
// Calls without valid credentials, on any endpoint and any replica; tokens
// and passwords read from the identities file (only hashes are stored);
// user-name probing through the Handshake (unknown users cost the same
// bcrypt comparison, and the error does not say which half was wrong);
// reading outside one's roots by path, glob, traversal or ticket (tickets
// are signed and bound to the identity by server/ticketsign).
//
// # What it leaves to the deployment
//
// Transport security: bearer tokens and passwords must travel over TLS
// (server/tlsfiles); without it anyone on the path can replay them.
// Handshake rate: bcrypt is deliberately slow, so the server should limit
// Handshakes per peer (server/limits). Revocation of a Handshake token
// before its expiry (remove the identity, or rotate the key ring); of a JWT
// (short lifetimes at the identity provider); of a certificate (short
// lifetimes; no CRL/OCSP is checked). Keeping the identities file, JWKS and
// secrets readable by scand only. The files are read at start; a change
// needs a restart (or a reload the server wires in).
package auth
