package ranged

import (
	"bytes"
	"context"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/scand/scand/storage"
)

// breaking is a body that delivers at most n bytes, then fails.
type breaking struct {
	r io.Reader
	n int
}

func (b *breaking) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, syscall.ECONNRESET
	}
	p = p[:min(len(p), b.n)]
	n, err := b.r.Read(p)
	b.n -= n
	return n, err
}

func (b *breaking) Close() error { return nil }

// TestReadResumes checks that Read fills spans across bodies that break
// off, asking each time for exactly the bytes still missing, and drops the
// gaps between spans.
func TestReadResumes(t *testing.T) {
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(i * 31)
	}
	for _, tc := range []struct {
		name  string
		per   int // bytes each body delivers before breaking; 0: never breaks
		spans []storage.Span
	}{
		{"one span, unbroken", 0, []storage.Span{{Off: 10, Buf: make([]byte, 1000)}}},
		{"one span, broken every 7000", 7000, []storage.Span{{Off: 10, Buf: make([]byte, 100_000)}}},
		{"spans with gaps, broken", 50_000, []storage.Span{
			{Off: 5, Buf: make([]byte, 10)}, {Off: 100_000, Buf: make([]byte, 70_000)}, {Off: 250_000, Buf: make([]byte, 3)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, end := tc.spans[0].Off, tc.spans[len(tc.spans)-1].Off+int64(len(tc.spans[len(tc.spans)-1].Buf))
			var asked [][2]int64
			open := func(ctx context.Context, off, e int64) (io.ReadCloser, error) {
				asked = append(asked, [2]int64{off, e})
				r := bytes.NewReader(data[off:e])
				if tc.per == 0 {
					return io.NopCloser(r), nil
				}
				return &breaking{r: r, n: tc.per}, nil
			}
			d := &Dest{Spans: tc.spans, Off: first, End: end}
			n, err := Read(context.Background(), "test: read x", d, Policy{MaxAttempts: 10, MaxBackoff: time.Millisecond, StallTimeout: time.Second}, open)
			if err != nil || n != end-first {
				t.Fatalf("Read = %d, %v; want %d bytes", n, err, end-first)
			}
			for _, s := range tc.spans {
				if !bytes.Equal(s.Buf, data[s.Off:s.Off+int64(len(s.Buf))]) {
					t.Errorf("span at %d holds the wrong bytes", s.Off)
				}
			}
			for i := 1; i < len(asked); i++ {
				if asked[i][0] != asked[i-1][0]+int64(tc.per) || asked[i][1] != end {
					t.Errorf("request %d asked for %v after %v, want the missing bytes only", i, asked[i], asked[i-1])
				}
			}
		})
	}
}

// TestReadGivesUp checks that bodies that never deliver end the read with
// storage.ErrUnavailable after MaxAttempts requests, and that a cancelled
// ctx returns ctx.Err() unwrapped.
func TestReadGivesUp(t *testing.T) {
	requests := 0
	open := func(ctx context.Context, off, e int64) (io.ReadCloser, error) {
		requests++
		return &breaking{r: bytes.NewReader(nil)}, nil
	}
	p := Policy{MaxAttempts: 4, MaxBackoff: time.Millisecond, StallTimeout: time.Second}
	_, err := Read(context.Background(), "test: read x", OneSpan(make([]byte, 10), 0), p, open)
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, syscall.ECONNRESET) || requests != 4 {
		t.Errorf("Read = %v after %d requests, want storage.ErrUnavailable after 4", err, requests)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, "test: read x", OneSpan(make([]byte, 10), 0), p, open); err != context.Canceled {
		t.Errorf("Read with a cancelled ctx = %v, want context.Canceled", err)
	}
}

// TestReadStall checks that a body that goes silent is abandoned after the
// stall timeout and retried.
func TestReadStall(t *testing.T) {
	calls := 0
	open := func(ctx context.Context, off, e int64) (io.ReadCloser, error) {
		calls++
		if calls == 1 {
			return &silent{ctx: ctx}, nil
		}
		return io.NopCloser(bytes.NewReader(make([]byte, e-off))), nil
	}
	p := Policy{MaxAttempts: 3, MaxBackoff: time.Millisecond, StallTimeout: 50 * time.Millisecond}
	if _, err := Read(context.Background(), "test: read x", OneSpan(make([]byte, 10), 0), p, open); err != nil || calls != 2 {
		t.Errorf("Read = %v after %d requests, want success after 2", err, calls)
	}
}

// silent blocks until its request's ctx ends, as a body whose peer went
// quiet does once the watchdog cancels it.
type silent struct{ ctx context.Context }

func (s *silent) Read([]byte) (int, error) { <-s.ctx.Done(); return 0, s.ctx.Err() }
func (s *silent) Close() error             { return nil }

func TestBackoff(t *testing.T) {
	for n := 1; n < 100; n++ {
		d := Backoff(n, time.Second)
		want := min(time.Second, 50*time.Millisecond<<min(n-1, 20))
		if d < want/2 || d > want {
			t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", n, d, want/2, want)
		}
	}
}
