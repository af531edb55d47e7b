package s3_test

// Fault tests: toxiproxy sits between the backend and versitygw and adds
// latency, resets connections, cuts response bodies short or stalls them.
// Reads must then return exactly the right bytes, retried, or a clear error
// after a bounded number of attempts, and each test ends within seconds.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/s3"
)

// randomBytes returns n bytes that differ at every offset, so a retried
// read that resumes at the wrong place shows.
func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// faultSetup is a bucket holding one object, a proxy in front of
// versitygw, and an open handle on the object through the proxy.
type faultSetup struct {
	bucket string
	data   []byte
	proxy  *proxy
	obs    *observed
	rec    *recorder
	b      *s3.Bucket
	obj    storage.Object
}

func newFaultSetup(t *testing.T, size int, cfg s3.Config) *faultSetup {
	t.Helper()
	needToxiproxy(t)
	f := &faultSetup{data: randomBytes(size), obs: &observed{}, rec: &recorder{}}
	f.bucket = newS3Bucket(t, map[string][]byte{"obj": f.data})
	f.proxy = newProxy(t)
	cfg.Observe = f.obs.observe
	cfg.WrapTransport = f.rec.wrap
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 50 * time.Millisecond
	}
	f.b = newBackend(t, f.proxy.endpoint(), cfg)
	var err error
	f.obj, err = f.b.Open(context.Background(), storage.Info{Name: "s3://" + f.bucket + "/obj"})
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	t.Cleanup(func() { f.obj.Close() })
	return f
}

// readAll reads the whole object in one ReadAt, in the background.
func (f *faultSetup) readAll(ctx context.Context) (<-chan error, []byte) {
	p := make([]byte, len(f.data))
	done := make(chan error, 1)
	go func() { done <- f.obj.ReadAt(ctx, p, 0) }()
	return done, p
}

func wait(t *testing.T, done <-chan error, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("ReadAt still running after %v", limit)
		return nil
	}
}

// checkResumed checks that the GETs after the first asked for the bytes
// still missing, each with the version's If-Match.
func (f *faultSetup) checkResumed(t *testing.T) {
	t.Helper()
	gets := f.rec.ranged()
	if len(gets) < 2 {
		t.Fatalf("sent %d ranged GETs, want a retry", len(gets))
	}
	want := f.obj.Info().Version
	prev := int64(-1)
	for _, g := range gets {
		var first, last int64
		if _, err := fmt.Sscanf(g.Range, "bytes=%d-%d", &first, &last); err != nil {
			t.Fatalf("GET with Range %q", g.Range)
		}
		if last != int64(len(f.data))-1 || first < prev {
			t.Errorf("GET %s: want a range ending at %d that does not go backwards (after %d)", g.Range, len(f.data)-1, prev)
		}
		prev = first
		if strings.Trim(g.IfMatch, `"`) != want {
			t.Errorf("GET %s: If-Match %q, want %q", g.Range, g.IfMatch, want)
		}
	}
	if prev == 0 {
		t.Errorf("no GET resumed past byte 0: %+v", gets)
	}
}

// TestFaultLatency adds 30 ms to every response and checks Stat, Open,
// concurrent reads, paged listing and Expand through it. (The whole
// acceptance suite through the proxy takes several seconds more and adds
// nothing a slow link changes.)
func TestFaultLatency(t *testing.T) {
	ctx := context.Background()
	f := newFaultSetup(t, 100_000, s3.Config{ListPageSize: 2})
	f.proxy.add("latency", map[string]any{"latency": 30})
	name := f.obj.Info().Name

	start := time.Now()
	info, err := f.b.Stat(ctx, name)
	if err != nil || info.Size != int64(len(f.data)) || info.Version != f.obj.Info().Version {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("Stat through the latency toxic took %v", d)
	}
	o, err := f.b.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 4 {
				off := (g*4 + i) * 3000
				p := make([]byte, 2500)
				if err := o.ReadAt(ctx, p, int64(off)); err != nil || !bytes.Equal(p, f.data[off:off+len(p)]) {
					t.Errorf("ReadAt(%d bytes at %d) = %v or wrong bytes", len(p), off, err)
				}
			}
		})
	}
	wg.Wait()
	for _, k := range []string{"b/1", "b/2", "b/3", "c"} {
		put(t, f.bucket, k, []byte(k))
	}
	dir := "s3://" + f.bucket + "/b/"
	infos, err := storage.Expand(ctx, f.b, dir)
	if got := names(infos); err != nil || len(got) != 3 || got[0] != dir+"1" {
		t.Errorf("Expand(%q) = %q, %v", dir, got, err)
	}
	if n := f.obs.count(s3.OpRetry); n != 0 {
		t.Errorf("%d retries through a slow but sound link", n)
	}
}

// TestFaultResetMidBody resets the connection in the middle of a body: the
// read resumes where it broke off and returns exactly the object.
func TestFaultResetMidBody(t *testing.T) {
	f := newFaultSetup(t, 2<<20, s3.Config{})
	slow := f.proxy.add("bandwidth", map[string]any{"rate": 200}) // KB/s: 10 s for the body
	var once sync.Once
	retried := make(chan struct{})
	f.obs.onRetry = func(error) { once.Do(func() { close(retried) }) }

	done, p := f.readAll(context.Background())
	// Reset once the body flows: the GET was sent, and 300 ms of body
	// (about 60 kB) went through.
	for len(f.rec.ranged()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	reset := f.proxy.add("reset_peer", map[string]any{"timeout": 0})
	resetAt := time.Now()
	select {
	case <-retried:
	case err := <-done:
		t.Fatalf("ReadAt ended before any retry: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no retry 10 s after the reset")
	}
	f.proxy.remove(reset)
	f.proxy.remove(slow)
	t.Logf("retried %v after the reset", time.Since(resetAt).Round(time.Millisecond))
	if err := wait(t, done, 15*time.Second); err != nil {
		t.Fatalf("ReadAt: %v", err)
	}
	if !bytes.Equal(p, f.data) {
		t.Fatal("ReadAt returned the wrong bytes")
	}
	t.Logf("read in %v after the reset; GETs: %+v", time.Since(resetAt).Round(time.Millisecond), f.rec.ranged())
	f.checkResumed(t)
}

// TestFaultCutBody closes every connection after 300 kB: a 1 MiB read takes
// four GETs, each resuming where the last one was cut.
func TestFaultCutBody(t *testing.T) {
	f := newFaultSetup(t, 1<<20, s3.Config{})
	f.proxy.add("limit_data", map[string]any{"bytes": 300_000})
	done, p := f.readAll(context.Background())
	if err := wait(t, done, 15*time.Second); err != nil {
		t.Fatalf("ReadAt: %v", err)
	}
	if !bytes.Equal(p, f.data) {
		t.Fatal("ReadAt returned the wrong bytes")
	}
	if n := f.obs.count(s3.OpRetry); n < 3 {
		t.Errorf("%d retries, want at least 3", n)
	}
	f.checkResumed(t)
}

// TestFaultBounded makes every attempt fail and checks that reads and
// Stat give up after the configured attempts, quickly and with a message
// that says so.
func TestFaultBounded(t *testing.T) {
	for _, tt := range []struct {
		name    string
		toxic   string
		attrs   map[string]any
		wantMsg string
	}{
		// Every connection is reset at its first byte: the SDK retries.
		{"reset", "reset_peer", map[string]any{"timeout": 0}, "after 3 attempts"},
		// Every connection is cut a little way into the body: each GET
		// makes progress, so the total bound (3*MaxAttempts) ends it.
		{"cut", "limit_data", map[string]any{"bytes": 2000}, "gave up after 9 failed requests"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFaultSetup(t, 1<<20, s3.Config{MaxAttempts: 3})
			f.proxy.add(tt.toxic, tt.attrs)
			start := time.Now()
			done, _ := f.readAll(context.Background())
			err := wait(t, done, 15*time.Second)
			if err == nil {
				t.Fatal("ReadAt succeeded through a broken connection")
			}
			if errors.Is(err, storage.ErrChanged) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				t.Errorf("ReadAt = %v, classified as a storage condition", err)
			}
			if !errors.Is(err, storage.ErrUnavailable) {
				t.Errorf("ReadAt = %v, want storage.ErrUnavailable once the retries are spent", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), f.obj.Info().Name) {
				t.Errorf("ReadAt = %q, want a message naming the object and saying %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), f.proxy.addr) {
				t.Errorf("message shows the endpoint: %v", err)
			}
			t.Logf("ReadAt after %v: %v", time.Since(start).Round(time.Millisecond), err)
			if tt.toxic == "reset_peer" {
				// Every step fails the same way: HEAD, GET, list.
				name := f.obj.Info().Name
				_, err := f.b.Stat(context.Background(), name)
				if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
					t.Errorf("Stat = %v, want a failure after 3 attempts", err)
				}
				if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), name) {
					t.Errorf("Stat = %v, want storage.ErrUnavailable naming the object", err)
				}
				err = f.b.List(context.Background(), name, func(storage.Info) error { return nil })
				if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), name) {
					t.Errorf("List = %v, want storage.ErrUnavailable naming the prefix", err)
				}
				if o, err := f.b.Open(context.Background(), storage.Info{Name: name}); !errors.Is(err, storage.ErrUnavailable) {
					if err == nil {
						o.Close()
					}
					t.Errorf("Open without a known version = %v, want storage.ErrUnavailable", err)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v to give up", d)
			}
		})
	}
}

// TestFaultStall stops all data, headers and body, without closing the
// connection: the stall timeout abandons the GET and retries it.
func TestFaultStall(t *testing.T) {
	const stall = 300 * time.Millisecond
	t.Run("recovers", func(t *testing.T) {
		f := newFaultSetup(t, 100_000, s3.Config{StallTimeout: stall})
		toxic := f.proxy.add("timeout", map[string]any{"timeout": 0})
		f.obs.onRetry = func(err error) {
			if !strings.Contains(err.Error(), "no data for") {
				t.Errorf("retried after %v, want a stall", err)
			}
			f.proxy.remove(toxic)
		}
		start := time.Now()
		done, p := f.readAll(context.Background())
		if err := wait(t, done, 10*time.Second); err != nil {
			t.Fatalf("ReadAt: %v", err)
		}
		if !bytes.Equal(p, f.data) {
			t.Fatal("ReadAt returned the wrong bytes")
		}
		if d := time.Since(start); d < stall || d > 5*time.Second {
			t.Errorf("ReadAt took %v, want a little more than the stall timeout %v", d, stall)
		}
	})
	t.Run("stat", func(t *testing.T) {
		f := newFaultSetup(t, 10, s3.Config{StallTimeout: stall, MaxAttempts: 2})
		f.proxy.add("timeout", map[string]any{"timeout": 0})
		start := time.Now()
		_, err := f.b.Stat(context.Background(), f.obj.Info().Name)
		if err == nil || !strings.Contains(err.Error(), "after 2 attempts") {
			t.Errorf("Stat = %v, want a failure after 2 attempts", err)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("took %v to give up after 2 stalls of %v", d, stall)
		}
		t.Logf("Stat after %v: %v", time.Since(start).Round(time.Millisecond), err)
	})
	t.Run("gives up", func(t *testing.T) {
		f := newFaultSetup(t, 100_000, s3.Config{StallTimeout: stall, MaxAttempts: 3})
		f.proxy.add("timeout", map[string]any{"timeout": 0})
		start := time.Now()
		done, _ := f.readAll(context.Background())
		err := wait(t, done, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "gave up after 3 failed requests") || !strings.Contains(err.Error(), "no data for") {
			t.Fatalf("ReadAt = %v, want it to give up after 3 stalls", err)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("took %v to give up after 3 stalls of %v", d, stall)
		}
	})
}

// TestReadCancel cancels reads that are slow or stalled: ReadAt returns
// context.Canceled promptly, well before the transfer or the stall timeout
// would end.
func TestReadCancel(t *testing.T) {
	for _, tt := range []struct {
		toxic string
		attrs map[string]any
	}{
		{"bandwidth", map[string]any{"rate": 20}}, // 20 KB/s: about 50 s for 1 MiB
		{"timeout", map[string]any{"timeout": 0}}, // no data at all
	} {
		t.Run(tt.toxic, func(t *testing.T) {
			f := newFaultSetup(t, 1<<20, s3.Config{})
			f.proxy.add(tt.toxic, tt.attrs)
			ctx, cancel := context.WithCancel(context.Background())
			done, _ := f.readAll(ctx)
			time.Sleep(200 * time.Millisecond)
			cancel()
			start := time.Now()
			err := wait(t, done, 5*time.Second)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("ReadAt = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("ReadAt returned %v after the cancel", d)
			}
			if n := f.obs.count(s3.OpRetry); n != 0 {
				t.Errorf("%d retries after a cancel, want none", n)
			}
		})
	}
}

// TestReadSpans reads spans of a range in one GET, the gaps dropped; with
// every connection cut after 300 kB the GETs resume where the body broke
// off, inside a span or inside a gap, and the spans still hold the right
// bytes.
func TestReadSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cut     bool
		minGETs int
	}{
		{"one GET", false, 1},
		{"bodies cut every 300 kB", true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultSetup(t, 1<<20, s3.Config{})
			if tc.cut {
				f.proxy.add("limit_data", map[string]any{"bytes": 300_000})
			}
			// Spans of 10 kB to 60 kB with gaps of 0 to 90 kB, from 1000 on.
			var spans []storage.Span
			r := rand.New(rand.NewPCG(3, 4))
			for off := int64(1000); ; {
				n := int64(10_000 + r.IntN(50_000))
				if off+n > int64(len(f.data)) {
					break
				}
				spans = append(spans, storage.Span{Off: off, Buf: make([]byte, n)})
				off += n + int64(r.IntN(90_000))
			}
			sr := f.obj
			if !sr.Capabilities().SpanReads {
				t.Fatal("an S3 object does not declare span reads")
			}
			if err := sr.ReadSpans(context.Background(), spans); err != nil {
				t.Fatalf("ReadSpans: %v", err)
			}
			for _, s := range spans {
				if !bytes.Equal(s.Buf, f.data[s.Off:s.Off+int64(len(s.Buf))]) {
					t.Fatalf("span at %d holds the wrong bytes", s.Off)
				}
			}
			gets := f.rec.ranged()
			last := spans[len(spans)-1]
			want := fmt.Sprintf("bytes=1000-%d", last.Off+int64(len(last.Buf))-1)
			if len(gets) < tc.minGETs || gets[0].Range != want {
				t.Errorf("GETs %+v, want at least %d, the first for %s", gets, tc.minGETs, want)
			}
			if !tc.cut && len(gets) != 1 {
				t.Errorf("%d GETs without faults, want 1", len(gets))
			}
			bad := []storage.Span{{Off: 100, Buf: make([]byte, 10)}, {Off: 105, Buf: make([]byte, 10)}}
			if err := sr.ReadSpans(context.Background(), bad); !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("overlapping spans: %v, want fs.ErrInvalid", err)
			}
		})
	}
}
