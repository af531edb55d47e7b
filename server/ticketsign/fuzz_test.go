package ticketsign

import (
	"bytes"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// FuzzOpen feeds arbitrary envelopes to Open. Whatever the input, Open must
// not panic, and it may only succeed on claims the key actually signed:
// fuzzing must never find a forgery.
func FuzzOpen(f *testing.F) {
	// A fixed clock: seeds are signed in the coordinating process and
	// checked in worker processes, so the claims must come out the same.
	s := testSigner(testRing(f, 1), &clock{t: time.Unix(1_800_000_000, 0)})
	ticket, _ := s.Sign(KindTicket, "alice", []byte("task"), time.Hour)
	token, _ := s.Sign(KindBearerToken, "alice", nil, time.Hour)
	var env scandv1.SignedEnvelope
	_ = proto.Unmarshal(ticket, &env)
	signedClaims := env.GetClaims()
	f.Add(ticket)
	f.Add(token)
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x01, 0x22, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := s.Open(KindTicket, data)
		if err != nil {
			return
		}
		var got scandv1.SignedEnvelope
		if proto.Unmarshal(data, &got) != nil || !bytes.Equal(got.GetClaims(), signedClaims) {
			t.Fatalf("Open accepted claims the key never signed: %+v", c)
		}
	})
}

// FuzzParseKeyRing checks the key file parser never panics and never
// accepts a key shorter than MinKeyBytes.
func FuzzParseKeyRing(f *testing.F) {
	f.Add([]byte("# c\n\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"))
	f.Add([]byte("AAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ring, err := ParseKeyRing(data)
		if err != nil {
			return
		}
		for _, k := range ring.keys {
			if len(k.secret) < MinKeyBytes {
				t.Fatalf("accepted a %d-byte key", len(k.secret))
			}
		}
	})
}
