package auth

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"golang.org/x/crypto/bcrypt"
	"sigs.k8s.io/yaml"

	"github.com/scand/scand/server/auth/scope"
)

// ErrBadConfig is wrapped by every error ParseConfig returns.
var ErrBadConfig = errors.New("auth: bad identities file")

// maxConfigBytes bounds the identities file; thousands of identities fit.
const maxConfigBytes = 8 << 20

// Config is the parsed identities file (see the package doc for its
// format). It is immutable after parsing and safe for concurrent use.
type Config struct {
	identities  map[string]*identityEntry
	byToken     map[string]string // SHA-256 hex of a token -> identity name
	maxCost     int               // the highest bcrypt cost of the file's password hashes (DefaultCost if none)
	hasPassword bool              // some identity has a password
}

type identityEntry struct {
	name     string
	password []byte // bcrypt hash; nil: no Basic login
	scope    scope.Scope
}

// fileFormat is the identities file as written.
type fileFormat struct {
	Identities []identityFormat `json:"identities"`
}

type identityFormat struct {
	Name           string   `json:"name"`
	TokenSHA256    []string `json:"token_sha256,omitempty"`
	PasswordBcrypt string   `json:"password_bcrypt,omitempty"`
	Roots          []string `json:"roots"`
}

// LoadConfig reads and parses the identities file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: reading identities file: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses an identities file, YAML or JSON. Unknown fields,
// duplicate names or token hashes, malformed hashes and bad roots are
// errors: a typo must not silently widen or drop access.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadConfig, maxConfigBytes)
	}
	var f fileFormat
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	cfg := &Config{identities: map[string]*identityEntry{}, byToken: map[string]string{}, maxCost: bcrypt.DefaultCost}
	for i, id := range f.Identities {
		if err := cfg.add(id); err != nil {
			return nil, fmt.Errorf("%w: identity %d (%q): %w", ErrBadConfig, i+1, id.Name, err)
		}
	}
	return cfg, nil
}

func (c *Config) add(id identityFormat) error {
	if id.Name == "" {
		return errors.New("name is empty")
	}
	if _, dup := c.identities[id.Name]; dup {
		return errors.New("name appears twice")
	}
	sc, err := scope.Parse(id.Roots)
	if err != nil {
		return err
	}
	entry := &identityEntry{name: id.Name, scope: sc}
	if id.PasswordBcrypt != "" {
		cost, err := bcrypt.Cost([]byte(id.PasswordBcrypt))
		if err != nil {
			return fmt.Errorf("password_bcrypt is not a bcrypt hash (htpasswd -nbBC 10 \"\" PASSWORD): %w", err)
		}
		if c.hasPassword {
			c.maxCost = max(c.maxCost, cost)
		} else {
			c.maxCost, c.hasPassword = cost, true
		}
		entry.password = []byte(id.PasswordBcrypt)
	}
	for _, h := range id.TokenSHA256 {
		if raw, err := hex.DecodeString(h); err != nil || len(raw) != 32 || hex.EncodeToString(raw) != h {
			return fmt.Errorf("token_sha256 %q is not 64 lower-case hex digits (printf %%s TOKEN | sha256sum)", h)
		}
		if other, dup := c.byToken[h]; dup {
			return fmt.Errorf("a token hash is also listed for %q", other)
		}
		c.byToken[h] = id.Name
	}
	c.identities[id.Name] = entry
	return nil
}

// Scope returns the roots the named identity may read; ok is false for a
// name the file does not list, which then may read nothing.
func (c *Config) Scope(name string) (s scope.Scope, ok bool) {
	e, ok := c.identities[name]
	if !ok {
		return scope.Scope{}, false
	}
	return e.scope, true
}

// Has reports whether the file lists name.
func (c *Config) Has(name string) bool {
	_, ok := c.identities[name]
	return ok
}

// Len returns how many identities the file lists.
func (c *Config) Len() int { return len(c.identities) }
