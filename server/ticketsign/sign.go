package ticketsign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// Sentinels for every way verification fails; see the package doc for the
// code each maps to.
var (
	ErrUnsigned      = errors.New("ticketsign: not a signed ticket")
	ErrChanged       = errors.New("ticketsign: signature does not match")
	ErrUnknownKey    = errors.New("ticketsign: signed with an unknown key")
	ErrExpired       = errors.New("ticketsign: expired")
	ErrOtherIdentity = errors.New("ticketsign: issued to another identity")
	ErrWrongKind     = errors.New("ticketsign: wrong kind")
)

// Kind is what an envelope carries; an envelope of one kind never verifies
// as the other.
type Kind = scandv1.SignedKind

const (
	KindTicket      = scandv1.SignedKind_SIGNED_KIND_TICKET
	KindBearerToken = scandv1.SignedKind_SIGNED_KIND_BEARER_TOKEN
)

// DefaultTicketTTL is a suggested lifetime for DoGet tickets: long enough
// for a client that reads a scan's many endpoints one after another, short
// enough that a retired key stops mattering within hours, not days.
const DefaultTicketTTL = 6 * time.Hour

// Skew is the leeway Open allows past an expiry, for replicas whose clocks
// disagree slightly.
const Skew = 30 * time.Second

const (
	envelopeVersion = 1
	macDomain       = "scand.v1.SignedEnvelope\x00"
	tokenPrefix     = "scand1."
	// maxEnvelopeBytes bounds what Open parses. Tickets carry a schema, so
	// they are not tiny; gRPC's 4 MiB message limit applies before this.
	maxEnvelopeBytes = 4 << 20
)

// Claims is what a signed envelope vouches for.
type Claims struct {
	Kind     Kind
	Identity string
	Issued   time.Time
	Expires  time.Time
	Payload  []byte
	KeyID    string // set by Open: the key that verified
}

// Signer signs with its ring's first key and verifies with any of them. It
// is safe for concurrent use.
type Signer struct {
	ring *KeyRing
	now  func() time.Time
}

// NewSigner returns a Signer over ring.
func NewSigner(ring *KeyRing) *Signer { return &Signer{ring: ring, now: time.Now} }

// WithClock returns a copy of s that reads the time from now: for tests
// that pin issue and expiry times.
func (s *Signer) WithClock(now func() time.Time) *Signer { return &Signer{ring: s.ring, now: now} }

// Sign returns the envelope for payload, issued now to identity of kind and
// valid for ttl.
func (s *Signer) Sign(kind Kind, identity string, payload []byte, ttl time.Duration) ([]byte, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("ticketsign: ttl %v must be positive", ttl)
	}
	if identity == "" {
		return nil, errors.New("ticketsign: an envelope needs an identity (auth.Anonymous under --auth none)")
	}
	now := s.now()
	claims, err := proto.Marshal(&scandv1.SignedClaims{
		Kind:          kind,
		Identity:      identity,
		IssuedUnixMs:  now.UnixMilli(),
		ExpiresUnixMs: now.Add(ttl).UnixMilli(),
		Payload:       payload,
	})
	if err != nil {
		return nil, fmt.Errorf("ticketsign: encoding claims: %w", err)
	}
	k := s.ring.keys[0]
	env, err := proto.Marshal(&scandv1.SignedEnvelope{
		Version: envelopeVersion, KeyId: k.id, Claims: claims, Mac: mac(k, claims),
	})
	if err != nil {
		return nil, fmt.Errorf("ticketsign: encoding envelope: %w", err)
	}
	return env, nil
}

// Open verifies envelope as one of kind: format, key, MAC, kind and expiry,
// in that order, so nothing from the claims is trusted before the MAC is
// checked. It does not check the identity; see VerifyTicket.
func (s *Signer) Open(kind Kind, envelope []byte) (Claims, error) {
	var env scandv1.SignedEnvelope
	if len(envelope) > maxEnvelopeBytes || proto.Unmarshal(envelope, &env) != nil ||
		env.GetVersion() != envelopeVersion || len(env.GetMac()) == 0 || len(env.GetClaims()) == 0 {
		return Claims{}, fmt.Errorf("%w: the server signs every ticket it issues; "+
			"pass the ticket from GetFlightInfo unchanged", ErrUnsigned)
	}
	k, ok := s.ring.lookup(env.GetKeyId())
	if !ok {
		return Claims{}, fmt.Errorf("%w %q (retired, or from another deployment); "+
			"call GetFlightInfo again for a fresh one", ErrUnknownKey, env.GetKeyId())
	}
	if !hmac.Equal(mac(k, env.GetClaims()), env.GetMac()) {
		return Claims{}, fmt.Errorf("%w: it was changed after the server signed it; "+
			"pass the ticket from GetFlightInfo unchanged", ErrChanged)
	}
	var c scandv1.SignedClaims
	if err := proto.Unmarshal(env.GetClaims(), &c); err != nil {
		// A valid MAC over unparseable claims means a bug or a leaked key.
		return Claims{}, fmt.Errorf("%w: signed claims do not parse: %w", ErrChanged, err)
	}
	if c.GetKind() != kind {
		return Claims{}, fmt.Errorf("%w: this is a %s, not a %s", ErrWrongKind, kindName(c.GetKind()), kindName(kind))
	}
	expires := time.UnixMilli(c.GetExpiresUnixMs())
	if s.now().After(expires.Add(Skew)) {
		return Claims{}, fmt.Errorf("%w at %s; call %s again for a fresh one",
			ErrExpired, expires.UTC().Format(time.RFC3339), renewHint(kind))
	}
	return Claims{
		Kind: c.GetKind(), Identity: c.GetIdentity(), Issued: time.UnixMilli(c.GetIssuedUnixMs()),
		Expires: expires, Payload: c.GetPayload(), KeyID: k.id,
	}, nil
}

// VerifyTicket opens a DoGet ticket and checks it was issued to identity;
// it returns the payload (the ScanTask) the server signed.
func (s *Signer) VerifyTicket(ticket []byte, identity string) ([]byte, error) {
	c, err := s.Open(KindTicket, ticket)
	if err != nil {
		return nil, err
	}
	if c.Identity != identity {
		return nil, fmt.Errorf("%w: the ticket belongs to %q, the caller is %q; "+
			"tickets are not transferable, call GetFlightInfo as %q", ErrOtherIdentity, c.Identity, identity, identity)
	}
	return c.Payload, nil
}

// EncodeToken turns a bearer-token envelope into header-safe text.
func EncodeToken(envelope []byte) string {
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(envelope)
}

// DecodeToken reverses EncodeToken. ok is false when token is not one of
// scand's own (a static token from the identities file, a JWT).
func DecodeToken(token string) (envelope []byte, ok bool) {
	rest, found := strings.CutPrefix(token, tokenPrefix)
	if !found || len(rest) > base64.RawURLEncoding.EncodedLen(maxEnvelopeBytes) {
		return nil, false
	}
	envelope, err := base64.RawURLEncoding.DecodeString(rest)
	return envelope, err == nil
}

func mac(k key, claims []byte) []byte {
	h := hmac.New(sha256.New, k.secret)
	h.Write([]byte(macDomain))
	h.Write([]byte(k.id))
	h.Write([]byte{0})
	h.Write(claims)
	return h.Sum(nil)
}

func kindName(k Kind) string {
	switch k {
	case KindTicket:
		return "DoGet ticket"
	case KindBearerToken:
		return "bearer token"
	}
	return "unknown kind of envelope"
}

func renewHint(k Kind) string {
	if k == KindBearerToken {
		return "the Handshake"
	}
	return "GetFlightInfo"
}
