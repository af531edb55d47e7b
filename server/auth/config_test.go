package auth

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/scand/scand/server/ticketsign"
)

// docExample returns the identities file example from the package doc, so
// the documented format is the tested one.
func docExample(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(src), "\n") {
		text, indented := strings.CutPrefix(l, "//\t")
		switch {
		case indented && strings.HasPrefix(text, "identities:"):
			in = true
		case in && !indented:
			return []byte(strings.Join(lines, "\n"))
		}
		if in {
			lines = append(lines, text)
		}
	}
	t.Fatal("no identities example in doc.go")
	return nil
}

func TestDocExample(t *testing.T) {
	cfg, err := ParseConfig(docExample(t))
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if cfg.Len() != 2 {
		t.Fatalf("%d identities, want 2", cfg.Len())
	}
	alice, _ := cfg.Scope("alice")
	for name, want := range map[string]bool{
		"events/2026/01/a.parquet": true, "events/2025/a.parquet": false,
		"s3://analytics/team-a/x.parquet": true, "s3://analytics/team-b/x.parquet": false,
	} {
		if alice.Allows(name) != want {
			t.Errorf("alice: Allows(%q) != %v", name, want)
		}
	}
	etl, ok := cfg.Scope("CN=etl,O=Example")
	if !ok || !etl.Allows("any/file.orc") || etl.Allows("s3://analytics/x") {
		t.Errorf("etl's scope is %s", etl)
	}
	if _, ok := cfg.Scope("mallory"); ok {
		t.Error("an unlisted identity has a scope")
	}
	ring, _ := ticketsign.GenerateKeyRing()
	tokens := NewTokens(cfg, ticketsign.NewSigner(ring), 0)
	// The example's hashes are of "test" and "correct horse battery staple".
	id, err := tokens.Authenticate(bearerContext("test"))
	if err != nil || id != (Identity{Name: "alice", Method: MethodToken}) {
		t.Errorf("the example's token: %v %v", id, err)
	}
	if raceEnabled {
		return // the example's hash has cost 10, as documented: seconds under -race
	}
	if _, _, err := tokens.ExchangeBasic(context.Background(), "alice", "correct horse battery staple"); err != nil {
		t.Errorf("the example's password: %v", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	cases := []struct{ name, file, want string }{
		{"unknown field", "identities:\n- name: a\n  roots: [x]\n  root: [y]\n", "unknown field"},
		{"unknown top field", "identity: []\n", "unknown field"},
		{"empty name", "identities:\n- roots: [x]\n", "name is empty"},
		{"duplicate name", "identities:\n- name: a\n- name: a\n", "appears twice"},
		{"bad root", "identities:\n- name: a\n  roots: [../up]\n", "bad root"},
		{"short hash", "identities:\n- name: a\n  token_sha256: [abc]\n", "64 lower-case hex"},
		{"upper-case hash", "identities:\n- name: a\n  token_sha256: [" + strings.ToUpper(hash) + "]\n", "64 lower-case hex"},
		{"shared hash", "identities:\n- name: a\n  token_sha256: [" + hash + "]\n- name: b\n  token_sha256: [" + hash + "]\n", `also listed for "a"`},
		{"plain password", "identities:\n- name: a\n  password_bcrypt: hunter2\n", "not a bcrypt hash"},
		{"not yaml", "identities: [\n", "yaml"},
		{"wrong type", "identities: {a: 1}\n", "cannot unmarshal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.file))
			if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrBadConfig with %q", err, tc.want)
			}
		})
	}
	if cfg, err := ParseConfig([]byte(`{"identities": [{"name": "j", "roots": ["s3://b/"]}]}`)); err != nil || !cfg.Has("j") {
		t.Fatalf("JSON form: %v", err)
	}
	if cfg, err := ParseConfig(nil); err != nil || cfg.Len() != 0 {
		t.Fatalf("empty file: %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("identities:\n- name: a\n  roots: [x, \"s3://b/p/\"]\n  token_sha256: [9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08]\n"))
	f.Add([]byte(`{"identities":[{"name":"b","password_bcrypt":"$2a$10$CzBYcSfI1.ZFcIIV8CTS5OvG6oi6bDG323nharjes9yeYIOyORX8a"}]}`))
	f.Add([]byte("identities: [{name: &a x, roots: *a}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			return
		}
		for name, e := range cfg.identities {
			if name == "" || e.name != name {
				t.Fatalf("accepted identity %q stored as %q", name, e.name)
			}
		}
		for h, name := range cfg.byToken {
			if len(h) != 64 || !cfg.Has(name) {
				t.Fatalf("token hash %q for %q", h, name)
			}
		}
	})
}
