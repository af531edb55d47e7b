package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/wire"
)

// testServer starts a Server on 127.0.0.1:0 rooted at root and returns a
// stock Flight client for it.
func testServer(t *testing.T, root string, mem memory.Allocator) flight.Client {
	t.Helper()
	return testServerWith(t, onRoot(t, root, iosched.Options{}, Config{Mem: mem}))
}

// onRoot returns cfg serving the local directory root (read with opts)
// through a scheduler with io: the wiring cmd/scand does for --root.
func onRoot(t testing.TB, root string, io iosched.Options, cfg Config, opts ...local.Option) Config {
	t.Helper()
	b, err := local.New(root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bucket = &storage.Mux{Default: b} // s3:// names: not configured
	cfg.Scheduler = iosched.New(cfg.Bucket, io)
	return cfg
}

func testServerWith(t *testing.T, cfg Config) flight.Client {
	t.Helper()
	_, addr := serveForTest(t, cfg)
	return dialForTest(t, addr)
}

// serveForTest starts a Server with cfg (logging discarded) on
// 127.0.0.1:0, stopped when the test ends, and returns it and its address.
func serveForTest(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.Security.Signer == nil {
		cfg.Security.Signer = testSigner // so tests can open and forge tickets
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return srv, lis.Addr().String()
}

// dialForTest returns a stock Flight client of addr, closed when the test
// ends.
func dialForTest(t *testing.T, addr string, opts ...grpc.DialOption) flight.Client {
	t.Helper()
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	c, err := flight.NewClientWithMiddleware(addr, nil, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// scanResult is what a client gets for one request.
type scanResult struct {
	info    *flight.FlightInfo
	records []arrow.RecordBatch
	stats   []*scandv1.StreamStats
}

func (r *scanResult) release() {
	for _, rec := range r.records {
		rec.Release()
	}
}

func (r *scanResult) rows() int64 {
	var n int64
	for _, rec := range r.records {
		n += rec.NumRows()
	}
	return n
}

// scanJSON runs a whole scan the way a stock client does: GetFlightInfo,
// then DoGet on every endpoint in order.
func scanJSON(ctx context.Context, c flight.Client, req any) (*scanResult, error) {
	cmd, _ := json.Marshal(req)
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		return nil, err
	}
	res := &scanResult{info: info}
	for _, ep := range info.Endpoint {
		stream, err := c.DoGet(ctx, ep.Ticket)
		if err != nil {
			res.release()
			return nil, err
		}
		rdr, err := flight.NewRecordReader(stream)
		if err != nil {
			res.release()
			return nil, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rec.Retain()
			res.records = append(res.records, rec)
			if meta := rdr.LatestAppMetadata(); len(meta) > 0 {
				st, err := wire.UnmarshalStats(meta)
				if err != nil {
					rdr.Release()
					res.release()
					return nil, err
				}
				res.stats = append(res.stats, st)
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			res.release()
			return nil, err
		}
	}
	return res, nil
}

func testdata(t *testing.T, sub string) string {
	t.Helper()
	dir := os.Getenv("SCAND_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	dir = filepath.Join(dir, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("test data not found at %s (set SCAND_TESTDATA)", dir)
	}
	return dir
}

// Every file of the corpora either scans or fails with a clean status,
// and the server keeps serving. Nothing may panic or leak.
//
// It uses Go's allocator, not a checked one: arrow-go v18.8.0's delta
// decoders never free a 64-byte scratch buffer (delta_bit_packing.go,
// initBlock), which the garbage collector reclaims but a checked allocator
// reports. Ownership of scand's own batches is checked in the tests below.
func TestCorpusNeverCrashes(t *testing.T) {
	mem := memory.NewGoAllocator()
	root := testdata(t, "")
	c := testServer(t, root, mem)
	ctx := context.Background()
	var files []string
	for _, pattern := range []string{"parquet-testing/*.parquet", "parquet-testing/bad_data/*", "arrow-testing/parquet/fuzzing/*", "parquet-testing/*.encrypted"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		files = append(files, m...)
	}
	allowed := map[codes.Code]bool{codes.InvalidArgument: true, codes.DataLoss: true, codes.Unimplemented: true}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		if filepath.Base(rel) == "large_string_map.brotli.parquet" {
			continue // > 2 GiB decoded
		}
		res, err := scanJSON(ctx, c, map[string]any{"paths": []string{rel}})
		if err != nil {
			code := status.Code(err)
			if !allowed[code] {
				t.Errorf("%s: unexpected %v: %v", rel, code, err)
			}
			t.Logf("%-90s %v: %.150s", rel, code, status.Convert(err).Message())
			continue
		}
		t.Logf("%-90s ok, %d rows", rel, res.rows())
		res.release()
	}
	// Still serving.
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"parquet-testing/alltypes_plain.parquet"}})
	if err != nil {
		t.Fatalf("server stopped serving after the corpus: %v", err)
	}
	if res.rows() != 8 {
		t.Errorf("alltypes_plain: %d rows, want 8", res.rows())
	}
	res.release()
}

var _ = array.NewRecordBatch

// assertReleased fails the test unless every byte mem handed out is back.
// The client has the stream's last message before the server's stream
// goroutine has released what it sent, so the check waits a little for it.
func assertReleased(t *testing.T, mem *memory.CheckedAllocator) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); mem.CurrentAlloc() != 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	mem.AssertSize(t, 0)
}
