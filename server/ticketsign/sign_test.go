package ticketsign

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

func testRing(t testing.TB, seeds ...byte) *KeyRing {
	t.Helper()
	var lines []string
	for _, s := range seeds {
		lines = append(lines, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{s}, 32)))
	}
	ring, err := ParseKeyRing([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func testSigner(ring *KeyRing, c *clock) *Signer {
	return NewSigner(ring).WithClock(c.now)
}

func TestTicketRoundTrip(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s := testSigner(testRing(t, 1), c)
	task, _ := proto.Marshal(&scandv1.ScanTask{Path: "data/a.parquet", RowGroups: []int32{0, 1}})
	ticket, err := s.Sign(KindTicket, "alice", task, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.VerifyTicket(ticket, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, task) {
		t.Fatalf("payload changed in transit")
	}
	claims, err := s.Open(KindTicket, ticket)
	if err != nil {
		t.Fatal(err)
	}
	if claims.Identity != "alice" || !claims.Expires.Equal(c.t.Add(time.Hour)) || !claims.Issued.Equal(c.t) ||
		claims.KeyID != s.ring.SigningKeyID() {
		t.Fatalf("claims = %+v", claims)
	}
}

func TestTicketRejections(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s := testSigner(testRing(t, 1), c)
	task, _ := proto.Marshal(&scandv1.ScanTask{Path: "data/a.parquet", Size: 1234, Version: "v1"})
	ticket, _ := s.Sign(KindTicket, "alice", task, time.Minute)
	token, _ := s.Sign(KindBearerToken, "alice", nil, time.Minute)
	changed := bytes.Clone(ticket)
	changed[len(changed)-40] ^= 1 // inside the claims

	foreign, _ := testSigner(testRing(t, 2), c).Sign(KindTicket, "alice", task, time.Minute)
	forged := forgeKeyID(t, foreign, s.ring.SigningKeyID())

	cases := []struct {
		name     string
		ticket   []byte
		identity string
		at       time.Duration
		want     error
		hint     string
	}{
		{"bare ScanTask", task, "alice", 0, ErrUnsigned, "unchanged"},
		{"empty", nil, "alice", 0, ErrUnsigned, "unchanged"},
		{"garbage", []byte("\xff\xff\xff"), "alice", 0, ErrUnsigned, "unchanged"},
		{"changed byte", changed, "alice", 0, ErrChanged, "unchanged"},
		{"other deployment's key", foreign, "alice", 0, ErrUnknownKey, "GetFlightInfo again"},
		{"forged under our key id", forged, "alice", 0, ErrChanged, "unchanged"},
		{"expired", ticket, "alice", time.Minute + Skew + time.Millisecond, ErrExpired, "GetFlightInfo again"},
		{"other identity", ticket, "bob", 0, ErrOtherIdentity, `call GetFlightInfo as "bob"`},
		{"token as ticket", token, "alice", 0, ErrWrongKind, "bearer token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = time.Unix(1_800_000_000, 0).Add(tc.at)
			_, err := s.VerifyTicket(tc.ticket, tc.identity)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.hint) {
				t.Errorf("message %q lacks the hint %q", err, tc.hint)
			}
		})
	}
	c.t = time.Unix(1_800_000_000, 0).Add(time.Minute + Skew) // within skew: still valid
	if _, err := s.VerifyTicket(ticket, "alice"); err != nil {
		t.Fatalf("within the clock skew leeway: %v", err)
	}
}

// forgeKeyID relabels an envelope signed by another key with keyID, as an
// attacker who knows a key id but not the key would.
func forgeKeyID(t *testing.T, envelope []byte, keyID string) []byte {
	var env scandv1.SignedEnvelope
	if err := proto.Unmarshal(envelope, &env); err != nil {
		t.Fatal(err)
	}
	env.KeyId = keyID
	out, _ := proto.Marshal(&env)
	return out
}

func TestEveryChangedByteIsRejected(t *testing.T) {
	s := NewSigner(testRing(t, 1))
	ticket, _ := s.Sign(KindTicket, "alice", []byte("payload"), time.Hour)
	for i := range ticket {
		for _, bit := range []byte{0x01, 0x80} {
			mod := bytes.Clone(ticket)
			mod[i] ^= bit
			if p, err := s.VerifyTicket(mod, "alice"); err == nil && !bytes.Equal(p, []byte("payload")) {
				t.Fatalf("byte %d bit %#x: changed ticket verified with payload %q", i, bit, p)
			}
		}
	}
}

func TestKeyRotation(t *testing.T) {
	old := NewSigner(testRing(t, 1))
	both := NewSigner(testRing(t, 2, 1)) // new key signs, old still verifies
	fresh := NewSigner(testRing(t, 2))   // old key retired

	oldTicket, _ := old.Sign(KindTicket, "alice", []byte("p"), time.Hour)
	if _, err := both.VerifyTicket(oldTicket, "alice"); err != nil {
		t.Fatalf("old key must still verify during rotation: %v", err)
	}
	newTicket, _ := both.Sign(KindTicket, "alice", []byte("p"), time.Hour)
	c, err := fresh.Open(KindTicket, newTicket)
	if err != nil {
		t.Fatalf("the new key must sign: %v", err)
	}
	if c.KeyID != fresh.ring.SigningKeyID() || c.KeyID == old.ring.SigningKeyID() {
		t.Fatalf("signed with %s, want the new key %s", c.KeyID, fresh.ring.SigningKeyID())
	}
	if _, err := fresh.VerifyTicket(oldTicket, "alice"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("retired key: got %v, want ErrUnknownKey", err)
	}
	if _, err := old.VerifyTicket(newTicket, "alice"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("a replica without the new key: got %v, want ErrUnknownKey", err)
	}
}

func TestTokenEncoding(t *testing.T) {
	s := NewSigner(testRing(t, 1))
	env, _ := s.Sign(KindBearerToken, "alice", nil, time.Hour)
	text := EncodeToken(env)
	if !strings.HasPrefix(text, "scand1.") || strings.ContainsAny(text, "+/= ") {
		t.Fatalf("token %q is not header-safe", text)
	}
	back, ok := DecodeToken(text)
	if !ok || !bytes.Equal(back, env) {
		t.Fatalf("DecodeToken did not reverse EncodeToken")
	}
	if _, err := s.Open(KindTicket, back); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("token as ticket: got %v, want ErrWrongKind", err)
	}
	for _, other := range []string{"", "static-token", "eyJhbGciOi.x.y", "scand1.!!!"} {
		if _, ok := DecodeToken(other); ok {
			t.Errorf("DecodeToken(%q) claimed it", other)
		}
	}
}

func TestSignRejectsBadArguments(t *testing.T) {
	s := NewSigner(testRing(t, 1))
	if _, err := s.Sign(KindTicket, "a", nil, 0); err == nil {
		t.Error("ttl 0 accepted")
	}
	if _, err := s.Sign(KindTicket, "", nil, time.Hour); err == nil {
		t.Error("an empty identity accepted")
	}
}

func TestParseKeyRing(t *testing.T) {
	k32 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	k64 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 64))
	short := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 16))
	cases := []struct {
		name string
		file string
		keys int
		err  string
	}{
		{"one key", k32 + "\n", 1, ""},
		{"comments and blanks", "# keys\n\n  " + k64 + "  \n# old\n" + k32 + "\n", 2, ""},
		{"empty", "", 0, "no keys"},
		{"only comments", "# nothing\n", 0, "no keys"},
		{"short key", k32 + "\n" + short, 0, "line 2 holds 16 bytes"},
		{"not base64", "not base64!", 0, "line 1 is not standard base64"},
		{"repeated", k32 + "\n" + k32, 0, "line 2 repeats"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ring, err := ParseKeyRing([]byte(tc.file))
			if tc.err != "" {
				if !errors.Is(err, ErrBadKeyFile) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want ErrBadKeyFile with %q", err, tc.err)
				}
				if strings.Contains(err.Error(), k32) || strings.Contains(err.Error(), short) {
					t.Fatalf("error %q reveals a key", err)
				}
				return
			}
			if err != nil || ring.Len() != tc.keys {
				t.Fatalf("got %v, %v keys; want %d", err, ring, tc.keys)
			}
		})
	}
}

func TestLoadAndGenerate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	k := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	if err := os.WriteFile(path, []byte(k), 0o400); err != nil {
		t.Fatal(err)
	}
	ring, err := LoadKeyRing(path)
	if err != nil || ring.Len() != 1 {
		t.Fatalf("LoadKeyRing: %v", err)
	}
	if _, err := LoadKeyRing(path + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	g1, err := GenerateKeyRing()
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := GenerateKeyRing()
	if g1.SigningKeyID() == g2.SigningKeyID() {
		t.Fatal("two generated keys are the same")
	}
	ticket, _ := NewSigner(g1).Sign(KindTicket, "a", nil, time.Hour)
	if _, err := NewSigner(g2).VerifyTicket(ticket, "a"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("another process's generated key: got %v", err)
	}
}
