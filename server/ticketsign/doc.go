// Package ticketsign signs and verifies what scand hands to clients and
// later trusts again: the tickets of the endpoints GetFlightInfo returns,
// and the bearer tokens the Flight Handshake issues.
//
// # What it defends against
//
// A Flight ticket is opaque to the client but not secret: the client holds
// it, may change it and may pass it on. Unsigned, a ScanTask names any path
// and any row group, so a client could read files its scope does not allow
// by writing its own ticket, or replay another identity's ticket it
// overheard. A signed ticket binds the payload to the identity it was
// issued to and an expiry, under HMAC-SHA256 (crypto/hmac, crypto/sha256;
// nothing hand-rolled), and Verify answers, each with its own sentinel:
//
//   - ErrUnsigned: not an envelope at all (a bare ScanTask, garbage);
//   - ErrChanged: the MAC does not match (a byte was changed after
//     signing, or the envelope was forged);
//   - ErrUnknownKey: signed with a key id no key of the ring has (a key
//     retired, or a ticket from another deployment);
//   - ErrExpired: past its expiry;
//   - ErrOtherIdentity: issued to another identity than the caller's;
//   - ErrWrongKind: a bearer token offered as a ticket, or the reverse.
//
// The server maps ErrOtherIdentity to PERMISSION_DENIED and the others to
// UNAUTHENTICATED at its edge; every error's message says what to do (plan
// the scan again with GetFlightInfo).
//
// # Format
//
// The envelope is proto/scand/v1/ticket.proto's SignedEnvelope: version,
// key id, the serialized SignedClaims (kind, identity, issue and expiry
// times, payload) and the MAC. The MAC is
//
//	HMAC-SHA256(key, "scand.v1.SignedEnvelope\x00" || key_id || "\x00" || claims)
//
// over the claims bytes exactly as received, so verification never depends
// on re-serializing protobuf. MACs are compared with hmac.Equal (constant
// time). Bearer tokens are the same envelope, base64url without padding,
// behind the prefix "scand1." (see EncodeToken), so they fit an
// authorization header.
//
// # Keys and rotation
//
// A KeyRing holds one or more keys of at least 32 random bytes. The first
// signs; every key verifies. A key's id is a fingerprint (the first 8 bytes
// of SHA-256 over a domain string and the key, in hex), so the envelope
// names a key without revealing it and an operator never has to name keys.
// To rotate across replicas without failing a ticket in flight: add the new
// key second on every replica (it verifies), then move it first (it signs),
// then, after the longest ticket lifetime has passed, remove the old one.
// The key file format is documented on ParseKeyRing.
//
// # What it leaves to the deployment
//
// Keeping the key file secret and identical on every replica (a Kubernetes
// Secret mounted read-only, mode 0400). Without a file, GenerateKeyRing makes
// a random key at start: tickets and tokens then verify only on the replica
// that issued them, and not after its restart. Confidentiality of the
// payload: a ticket is signed, not encrypted, so its holder can read the
// path and row groups in it (which the holder's scope allowed anyway). Time:
// expiry is checked against the verifying replica's clock, with Skew of
// leeway for replicas whose clocks disagree a little.
package ticketsign
