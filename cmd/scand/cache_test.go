package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCacheMemoryTier(t *testing.T) {
	tests := map[string]struct {
		c               cacheFlags
		total, prefetch int64
		want            int64
	}{
		"off":                 {c: cacheFlags{}, total: 1 << 30, prefetch: 512 << 20, want: 0},
		"dir: an eighth":      {c: cacheFlags{dir: "/c"}, total: 1 << 30, prefetch: 512 << 20, want: 128 << 20},
		"asked for":           {c: cacheFlags{memory: 64 << 20}, total: 1 << 30, prefetch: 512 << 20, want: 64 << 20},
		"at most half of pre": {c: cacheFlags{dir: "/c", memory: 1 << 30}, total: 1 << 30, prefetch: 512 << 20, want: 256 << 20},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.c.memoryTier(tc.total, tc.prefetch); got != tc.want {
				t.Fatalf("memoryTier = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestCacheUnusableDirWarns: a cache directory scand cannot use costs the
// disk tier, with a warning, never the server.
func TestCacheUnusableDirWarns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "someone-elses"), []byte("x"), 0o644)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pc := cacheFlags{dir: dir}.open(1<<20, log)
	if pc == nil {
		t.Fatal("no cache at all; want the memory tier")
	}
	defer pc.Close()
	if !strings.Contains(logs.String(), "disk tier off") {
		t.Fatalf("no warning logged: %s", logs.String())
	}
	if pc := (cacheFlags{dir: filepath.Join(dir, "someone-elses", "sub")}).open(0, log); pc != nil {
		t.Fatal("a cache with neither tier")
	}
}
