package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/iosched"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		m := map[string]any{}
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestAuditLines(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 30)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	var buf syncBuffer
	cfg := onRoot(t, dir, iosched.Options{}, Config{Mem: memory.NewGoAllocator()})
	cfg.Audit = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: LevelAudit}))
	c := testServerWith(t, cfg)
	ctx := context.Background()
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"a.parquet"}, "filter": "id < 5"})
	if err != nil {
		t.Fatal(err)
	}
	res.release()
	if _, err := scanJSON(ctx, c, map[string]any{"paths": []string{"missing.parquet"}}); err == nil {
		t.Fatal("scan of a missing file succeeded")
	}
	want := []map[string]any{
		{"method": "GetFlightInfo", "identity": "anonymous", "status": "OK", "endpoints": 1.0, "filter": "(id < 5)"},
		{"method": "DoGet", "identity": "anonymous", "status": "OK", "path": "a.parquet", "rows": 5.0},
		{"method": "GetFlightInfo", "status": "NotFound"},
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(buf.lines()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // DoGet logs just after the client sees the end
	}
	got := buf.lines()
	if len(got) != len(want) {
		t.Fatalf("%d audit lines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		for k, v := range w {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, got[i][k], v, got[i])
			}
		}
	}
}
