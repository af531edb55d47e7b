package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/auth"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/storage/local"
)

// The tests here run real servers (package server) on 127.0.0.1 that
// share one ticket key, as the replicas of a deployment do, and give the
// planned endpoints locations by hand (scand's planner adds them once it
// knows its peers).

// writePadded writes dir/name: groups row groups of rows rows, "id"
// counting from 0 and "pad" a 40-byte string, so a stream is large
// enough to break in the middle.
func writePadded(t *testing.T, dir, name string, groups, rows int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "pad", Type: arrow.BinaryTypes.String},
	}, nil)
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(false))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	id := int64(0)
	for range groups {
		for range rows {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%040d", id*7919))
			id++
		}
		rec := b.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// testReplica is one real server of a test deployment.
type testReplica struct {
	srv  *server.Server
	addr string
	done chan struct{}
	once sync.Once
}

func (r *testReplica) location() *flight.Location { return &flight.Location{Uri: "grpc://" + r.addr} }

// stop ends every stream at once, as a crashed replica does.
func (r *testReplica) stop() {
	r.once.Do(func() {
		r.srv.Stop()
		<-r.done
	})
}

// startReplica serves dir with the real server, signing with signer.
func startReplica(t *testing.T, dir string, signer *ticketsign.Signer) *testReplica {
	t.Helper()
	return startSecured(t, dir, server.Security{Signer: signer})
}

// startSecured serves dir with the real server under sec.
func startSecured(t *testing.T, dir string, sec server.Security) *testReplica {
	t.Helper()
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Bucket: b, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Security: sec, Planning: server.Planning{SplitBytes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &testReplica{srv: srv, addr: lis.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(r.stop)
	return r
}

func sharedSigner(t *testing.T) *ticketsign.Signer {
	t.Helper()
	ring, err := ticketsign.GenerateKeyRing()
	if err != nil {
		t.Fatal(err)
	}
	return ticketsign.NewSigner(ring)
}

// deadAddr is a 127.0.0.1 port nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// breakingProxy forwards TCP to target and cuts every connection once it
// has passed budget bytes from the server: a replica that dies in the
// middle of its streams, at a point the test controls (flow-control
// windows would otherwise let a small stream arrive whole before a stop).
type breakingProxy struct {
	lis    net.Listener
	target string
	budget int64
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
	broken atomic.Bool
}

func startBreakingProxy(t *testing.T, target string, budget int64) *breakingProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &breakingProxy{lis: lis, target: target, budget: budget}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *breakingProxy) addr() string { return p.lis.Addr().String() }

func (p *breakingProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.lis.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil || p.broken.Load() {
			in.Close()
			if out != nil {
				out.Close()
			}
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(out, in); out.Close() }()
		go func() {
			defer p.wg.Done()
			_, _ = io.CopyN(in, out, p.budget)
			p.broken.Store(true) // the replica is dead from now on
			in.Close()
			out.Close()
		}()
	}
}

func (p *breakingProxy) close() {
	p.lis.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// readAllIDs reads the scan's "id" column.
func readAllIDs(t *testing.T, s *Scan) ([]int64, error) {
	t.Helper()
	var ids []int64
	for s.Next() {
		ids = append(ids, s.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	return ids, s.Err()
}

func seqIDs(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// planWith plans req on c and gives every endpoint locs.
func planWith(t *testing.T, c *Client, req *scandv1.ScanRequest, locs ...*flight.Location) *flight.FlightInfo {
	t.Helper()
	info, err := c.Info(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range info.Endpoint {
		ep.Location = locs
	}
	return info
}

func TestFailoverFirstLocationDead(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	writePadded(t, dir, "a.parquet", 4, 500)
	signer := sharedSigner(t)
	planner, live := startReplica(t, dir, signer), startReplica(t, dir, signer)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c, err := Dial(context.Background(), planner.addr, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dead := &flight.Location{Uri: "grpc://" + deadAddr(t)}
	info := planWith(t, c, &scandv1.ScanRequest{Paths: []string{"a.parquet"}}, dead, live.location())
	scan, err := c.ScanInfo(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	ids, err := readAllIDs(t, scan)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, seqIDs(2000)) {
		t.Fatalf("read %d rows, not the file's 2000 in order", len(ids))
	}
	if st := scan.Stats(); st.Failovers != 4 || st.Endpoints != 4 {
		t.Errorf("stats %+v: want 4 endpoints, each moved once", st)
	}
	if n := c.pool.count(); n != 2 {
		t.Errorf("pool holds %d connections, want 2 (the dead and the live replica)", n)
	}
}

// A replica that dies in the middle of its streams: every endpoint
// resumes on the next location, and the rows are exactly the file's.
func TestFailoverResumesMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	writePadded(t, dir, "a.parquet", 3, 20000)
	signer := sharedSigner(t)
	planner, dying, next := startReplica(t, dir, signer), startReplica(t, dir, signer), startReplica(t, dir, signer)
	proxy := startBreakingProxy(t, dying.addr, 1<<20)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c, err := Dial(context.Background(), planner.addr, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := &scandv1.ScanRequest{Paths: []string{"a.parquet"}, BatchRows: 1000}
	info := planWith(t, c, req, &flight.Location{Uri: "grpc://" + proxy.addr()}, next.location())
	scan, err := c.ScanInfo(context.Background(), info, WithConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	ids, err := readAllIDs(t, scan)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, seqIDs(60000)) {
		t.Fatalf("read %d rows, not the file's 60000 in order", len(ids))
	}
	if st := scan.Stats(); st.Failovers == 0 || st.Rows != 60000 {
		t.Errorf("stats %+v: want 60000 rows and some failovers", st)
	}
}

// A replica stopped (srv.Stop) while the scan runs: the result equals a
// plain read.
func TestFailoverServerStoppedDuringScan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	writePadded(t, dir, "a.parquet", 6, 20000)
	signer := sharedSigner(t)
	planner, dying, next := startReplica(t, dir, signer), startReplica(t, dir, signer), startReplica(t, dir, signer)
	c, err := Dial(context.Background(), planner.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := &scandv1.ScanRequest{Paths: []string{"a.parquet"}, BatchRows: 500}
	info := planWith(t, c, req, dying.location(), next.location())
	scan, err := c.ScanInfo(context.Background(), info, WithConcurrency(2), WithBufferBatches(0))
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	var ids []int64
	for scan.Next() {
		ids = append(ids, scan.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
		if len(ids) == 1000 {
			dying.stop()
		}
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, seqIDs(120000)) {
		t.Fatalf("read %d rows, not the file's 120000 in order", len(ids))
	}
	t.Logf("failovers: %d", scan.Stats().Failovers)
}

// With nowhere left to resume, the error says how many rows arrived.
func TestFailoverCannotResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	writePadded(t, dir, "a.parquet", 1, 40000)
	only := startReplica(t, dir, sharedSigner(t))
	proxy := startBreakingProxy(t, only.addr, 512<<10)
	c, err := Dial(context.Background(), proxy.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info := planWith(t, c, &scandv1.ScanRequest{Paths: []string{"a.parquet"}, BatchRows: 1000},
		&flight.Location{Uri: "grpc://" + proxy.addr()})
	scan, err := c.ScanInfo(context.Background(), info)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	ids, err := readAllIDs(t, scan)
	if err == nil {
		t.Fatalf("read %d rows without an error through a proxy that breaks", len(ids))
	}
	var e *Error
	if !errors.As(err, &e) || status.Code(err) != codes.Unavailable ||
		!strings.Contains(err.Error(), fmt.Sprintf("after %d rows had arrived", len(ids))) || !strings.Contains(err.Error(), "cannot resume exactly") {
		t.Fatalf("err = %v (%v), want UNAVAILABLE saying %d rows arrived and why it cannot resume", err, status.Code(err), len(ids))
	}
	if e.Unreachable() || !strings.HasPrefix(err.Error(), "UNAVAILABLE: endpoint 0: ") {
		t.Errorf("message %q: want it to start with the endpoint, not call the server unreachable", err)
	}
}

func TestPoolOneConnectionPerReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	writePadded(t, dir, "a.parquet", 6, 100)
	signer := sharedSigner(t)
	planner, b, c2 := startReplica(t, dir, signer), startReplica(t, dir, signer), startReplica(t, dir, signer)
	c, err := Dial(context.Background(), planner.addr)
	if err != nil {
		t.Fatal(err)
	}
	info := planWith(t, c, &scandv1.ScanRequest{Paths: []string{"a.parquet"}})
	for i, ep := range info.Endpoint { // owners alternate, the planner among them
		switch i % 3 {
		case 0:
			ep.Location = []*flight.Location{b.location(), c2.location()}
		case 1:
			ep.Location = []*flight.Location{c2.location(), b.location()}
		case 2:
			ep.Location = []*flight.Location{{Uri: "grpc://" + planner.addr}}
		}
	}
	for range 2 { // reused across scans too
		scan, err := c.ScanInfo(context.Background(), info, WithConcurrency(6))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := readAllIDs(t, scan)
		scan.Release()
		if err != nil || !slices.Equal(ids, seqIDs(600)) {
			t.Fatalf("read %d rows, err %v", len(ids), err)
		}
	}
	if n := c.pool.count(); n != 2 {
		t.Fatalf("pool holds %d connections, want 2: one per replica, the planner's own reused", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := c.pool.count(); n != 0 {
		t.Fatalf("after Close the pool holds %d connections", n)
	}
	if _, err := c.pool.get(b.location().Uri); !errors.Is(err, errClientClosed) {
		t.Fatalf("get after Close: %v, want errClientClosed", err)
	}
}

// Replicas that require a token get the one given to Dial, on every
// location, for the DoGet and the resume action alike.
func TestFailoverSendsTokenToEveryLocation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	writePadded(t, dir, "a.parquet", 3, 20000)
	const token = "failover-test-token-0123456789abcdef"
	sum := sha256.Sum256([]byte(token))
	cfg, err := auth.ParseConfig([]byte(`{"identities": [{"name": "alice", "token_sha256": ["` + hex.EncodeToString(sum[:]) + `"], "roots": ["."]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	signer := sharedSigner(t)
	sec := func() server.Security {
		return server.Security{Signer: signer, Scopes: cfg.Scope,
			Guard: &auth.Guard{Authenticator: auth.NewTokens(cfg, signer, 0), Exempt: auth.HealthMethods}}
	}
	planner, dying, next := startSecured(t, dir, sec()), startSecured(t, dir, sec()), startSecured(t, dir, sec())
	proxy := startBreakingProxy(t, dying.addr, 1<<20)
	c, err := Dial(context.Background(), planner.addr, WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info := planWith(t, c, &scandv1.ScanRequest{Paths: []string{"a.parquet"}, BatchRows: 1000},
		&flight.Location{Uri: "grpc://" + proxy.addr()}, next.location())
	scan, err := c.ScanInfo(context.Background(), info, WithConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	ids, err := readAllIDs(t, scan)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, seqIDs(60000)) || scan.Stats().Failovers == 0 {
		t.Fatalf("read %d rows with %d failovers; want the file's 60000 after some", len(ids), scan.Stats().Failovers)
	}
}

func TestCandidates(t *testing.T) {
	c, err := Dial(context.Background(), "grpc://127.0.0.1:7001")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	loc := func(uris ...string) *flight.FlightEndpoint {
		ep := &flight.FlightEndpoint{}
		for _, u := range uris {
			ep.Location = append(ep.Location, &flight.Location{Uri: u})
		}
		return ep
	}
	tests := []struct {
		name string
		ep   *flight.FlightEndpoint
		want []string
	}{
		{"no location: own", loc(), []string{"127.0.0.1:7001"}},
		{"owner, runner-up, own", loc("grpc://127.0.0.1:7002", "grpc://127.0.0.1:7003"), []string{"127.0.0.1:7002", "127.0.0.1:7003", "127.0.0.1:7001"}},
		{"own listed: not twice", loc("grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002"), []string{"127.0.0.1:7001", "127.0.0.1:7002"}},
		{"duplicates once", loc("grpc://127.0.0.1:7002", "127.0.0.1:7002"), []string{"127.0.0.1:7002", "127.0.0.1:7001"}},
		{"reuse connection", loc(reuseConnection, "grpc://127.0.0.1:7002"), []string{"127.0.0.1:7001", "127.0.0.1:7002"}},
		{"bad URI skipped", loc("http://x:1", "grpc://127.0.0.1:7003"), []string{"127.0.0.1:7003", "127.0.0.1:7001"}},
		{"TLS is another connection", loc("grpc+tls://127.0.0.1:7001"), []string{"127.0.0.1:7001", "127.0.0.1:7001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reps, err := c.pool.candidates(tt.ep)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range reps {
				got = append(got, r.addr)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("candidates %v, want %v", got, tt.want)
			}
		})
	}
}
