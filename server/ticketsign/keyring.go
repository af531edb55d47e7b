package ticketsign

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// MinKeyBytes is the shortest key accepted: HMAC-SHA256's full strength
// needs a key at least as long as its 32-byte output.
const MinKeyBytes = 32

// ErrBadKeyFile is wrapped by every error ParseKeyRing returns.
var ErrBadKeyFile = errors.New("ticketsign: bad key file")

type key struct {
	id     string
	secret []byte
}

// KeyRing is an ordered list of HMAC keys: the first signs, all verify. It
// is immutable, so safe for concurrent use.
type KeyRing struct {
	keys []key
}

// ParseKeyRing reads a key file: one key per line, standard base64 (as
// `openssl rand -base64 32` writes it), at least MinKeyBytes once decoded.
// Blank lines and lines starting with '#' are ignored. The first key signs.
//
//	# scand ticket keys; the first signs, all verify
//	<new key: the output of openssl rand -base64 32>
//	<previous key, still accepted until its tickets have expired>
//
// Errors name the line, never the key.
func ParseKeyRing(data []byte) (*KeyRing, error) {
	ring := &KeyRing{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d is not standard base64", ErrBadKeyFile, line)
		}
		if len(secret) < MinKeyBytes {
			return nil, fmt.Errorf("%w: line %d holds %d bytes, want at least %d (openssl rand -base64 32)",
				ErrBadKeyFile, line, len(secret), MinKeyBytes)
		}
		k := newKey(secret)
		if seen[k.id] {
			return nil, fmt.Errorf("%w: line %d repeats an earlier key", ErrBadKeyFile, line)
		}
		seen[k.id] = true
		ring.keys = append(ring.keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKeyFile, err)
	}
	if len(ring.keys) == 0 {
		return nil, fmt.Errorf("%w: no keys (one base64 key per line, the first signs)", ErrBadKeyFile)
	}
	return ring, nil
}

// LoadKeyRing reads and parses the key file at path.
func LoadKeyRing(path string) (*KeyRing, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ticketsign: reading key file: %w", err)
	}
	ring, err := ParseKeyRing(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ring, nil
}

// GenerateKeyRing returns a ring of one fresh random key, for a server
// started without a key file. What it signs verifies only in this process.
func GenerateKeyRing() (*KeyRing, error) {
	secret := make([]byte, MinKeyBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("ticketsign: generating a key: %w", err)
	}
	return &KeyRing{keys: []key{newKey(secret)}}, nil
}

// SigningKeyID returns the id of the key that signs, for logs.
func (r *KeyRing) SigningKeyID() string { return r.keys[0].id }

// Len returns how many keys the ring holds.
func (r *KeyRing) Len() int { return len(r.keys) }

func newKey(secret []byte) key {
	h := sha256.New()
	h.Write([]byte("scand.v1 key id\x00"))
	h.Write(secret)
	return key{id: hex.EncodeToString(h.Sum(nil)[:8]), secret: bytes.Clone(secret)}
}

func (r *KeyRing) lookup(id string) (key, bool) {
	for _, k := range r.keys {
		if k.id == id {
			return k, true
		}
	}
	return key{}, false
}
