package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/auth"
	"github.com/scand/scand/server/ticketsign"
)

// planFor plans req on a server of root, called directly (no gRPC message
// limit in the way).
func planFor(t *testing.T, root string, req string) *flight.FlightInfo {
	t.Helper()
	srv, err := New(onRoot(t, root, iosched.Options{}, Config{Mem: memory.NewGoAllocator(), Security: Security{Signer: testSigner}}))
	if err != nil {
		t.Fatal(err)
	}
	info, err := srv.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(req)})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// copies writes n copies of the file at src into dir as f000.parquet, ...
func copies(t *testing.T, src, dir string, n int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmtName(i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fmtName(i int) string { return fmt.Sprintf("f%03d.parquet", i) }

// ticketSize is the size of info's only ticket without the file's size and
// version, which differ between files.
func ticketSize(t *testing.T, info *flight.FlightInfo) int {
	task := openTestTicket(t, info.Endpoint[0].Ticket.Ticket)
	task.Size, task.Version = 0, ""
	return proto.Size(task)
}

// With all columns, a ticket's size does not depend on the number of
// columns at all; with an explicit list it grows by a byte or two per
// column, not by the column's name and type.
func TestTicketSizeIndependentOfColumns(t *testing.T) {
	sizes := map[int][2]int{}
	for _, cols := range []int{4, 400} {
		dir := t.TempDir()
		rec := wideRecord(cols, 10)
		writeParquet(t, dir, "a.parquet", rec, 10)
		rec.Release()
		all := planFor(t, dir, `{"paths": ["a.parquet"]}`)
		explicit := planFor(t, dir, `{"paths": ["a.parquet"], "columns": ["c000", "c001", "c002", "c003"]}`)
		if len(all.Endpoint) != 1 || len(explicit.Endpoint) != 1 {
			t.Fatalf("%d columns: %d and %d endpoints, want 1", cols, len(all.Endpoint), len(explicit.Endpoint))
		}
		sizes[cols] = [2]int{ticketSize(t, all), ticketSize(t, explicit)}
	}
	if sizes[4][0] != sizes[400][0] {
		t.Errorf("all-column ticket is %d bytes for 4 columns, %d for 400: it must not grow with the column count", sizes[4][0], sizes[400][0])
	}
	if sizes[4][1] != sizes[400][1] {
		t.Errorf("a 4-column ticket is %d bytes from a 4-column file, %d from a 400-column one", sizes[4][1], sizes[400][1])
	}
	if grow := sizes[4][1] - sizes[4][0]; grow > 4*2+4 {
		t.Errorf("naming 4 columns adds %d bytes to the ticket, want about 2 per column", grow)
	}
}

// The case: 200 files of 2,000 columns, all columns, plan to a
// FlightInfo of at most 1 MB (it was 30.6 MB with the schema in every
// ticket), under gRPC's 4 MiB default that stock clients keep. The files
// are described as the footers would describe them: reading 200 real
// footers of 2,000 columns costs seconds of parsing that is not what this
// pins (TestFlightInfoOfRealWideFiles does it end to end on fewer files).
func TestFlightInfoOf200FilesOf2000Columns(t *testing.T) {
	rec := wideRecord(2000, 1)
	schema := rec.Schema()
	rec.Release()
	// The tasks the planner cuts for 200 such files of two 50 MiB row
	// groups each at the default split bytes (planner's
	// TestPlanOf200FilesOf2000Columns): one per row group, all columns.
	p := &planner.Plan{Schema: schema, Stats: &scandv1.PlanStats{}}
	for i := range 200 {
		for g := range 2 {
			p.Tasks = append(p.Tasks, &scandv1.ScanTask{Path: fmt.Sprintf("events/2026-01-01/part-%05d.parquet", i), Size: 3 << 30,
				Version: "\"0123456789abcdef0123456789abcdef\"", Format: scandv1.Format_FORMAT_PARQUET, RowGroups: []int32{int32(g)},
				Rows: 1e6, SchemaFingerprint: planner.SchemaFingerprint(schema)})
		}
	}
	srv := &Server{cfg: Config{Planning: Planning{SplitBytes: DefaultSplitBytes}}, mem: memory.NewGoAllocator(),
		sec: Security{Signer: testSigner, TicketTTL: time.Hour}}
	info, err := srv.flightInfo(&flight.FlightDescriptor{Type: flight.DescriptorCMD}, p, auth.Anonymous.Name)
	if err != nil {
		t.Fatal(err)
	}
	size := proto.Size(info)
	t.Logf("FlightInfo of %d endpoints: %d bytes, %d of them the schema", len(info.Endpoint), size, len(info.Schema))
	if len(info.Endpoint) != 400 {
		t.Fatalf("%d endpoints, want 400", len(info.Endpoint))
	}
	if size > 1<<20 {
		t.Errorf("FlightInfo is %d bytes, want at most 1 MiB", size)
	}
}

// Twenty real files of 2,000 columns, through GetFlightInfo: the schema
// once, and tickets of a few dozen bytes.
func TestFlightInfoOfRealWideFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and plans 20 files of 2,000 columns")
	}
	src, dir := t.TempDir(), t.TempDir()
	rec := wideRecord(2000, 2)
	writeParquet(t, src, "wide.parquet", rec, 2)
	rec.Release()
	copies(t, filepath.Join(src, "wide.parquet"), dir, 20)
	// split_bytes 1: a file per endpoint, as this test measures tickets.
	info := planFor(t, dir, `{"paths": ["*.parquet"], "split_bytes": 1}`)
	size := proto.Size(info)
	if len(info.Endpoint) != 20 {
		t.Fatalf("%d endpoints, want 20", len(info.Endpoint))
	}
	// Under 200 bytes of ScanTask, plus the signature's envelope: key id,
	// MAC, identity, issue and expiry times and their framing.
	if perTicket := (size - len(info.Schema)) / 20; perTicket > 200+envelopeBytes {
		t.Errorf("FlightInfo is %d bytes, %d of them schema: %d bytes per ticket, want under %d", size, len(info.Schema), perTicket, 200+envelopeBytes)
	}
}

// Tickets that do not match their file, forged by a holder of the ticket
// key or from another version of the protocol, are INVALID_ARGUMENT, never INTERNAL, and the server goes
// on serving.
func TestForgedTicketsAreInvalid(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 50)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["a.parquet"], "columns": ["id"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	good := openTestTicket(t, info.Endpoint[0].Ticket.Ticket)
	foreign := flight.SerializeSchema(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil), memory.NewGoAllocator())
	forge := func(f func(*scandv1.ScanTask)) []byte {
		task := proto.Clone(good).(*scandv1.ScanTask)
		f(task)
		b, _ := proto.Marshal(task)
		return signTestTicket(t, b) // what only a holder of the ticket key could send
	}
	for name, ticket := range map[string][]byte{
		"garbage":                   signTestTicket(t, []byte("\xff\xff not a ticket")),
		"row group out of range":    forge(func(t *scandv1.ScanTask) { t.RowGroups = []int32{7} }),
		"column index out of range": forge(func(t *scandv1.ScanTask) { t.Columns.Index = []uint32{9999} }),
		"absent name missing":       forge(func(t *scandv1.ScanTask) { t.Columns.Index = []uint32{0} }),
		"unknown compression":       forge(func(t *scandv1.ScanTask) { t.Compression = "gzip" }),
		"delta positions without fields": forge(func(t *scandv1.ScanTask) {
			t.SchemaDelta = &scandv1.SchemaDelta{Positions: []int32{0}}
		}),
		"delta position out of range": forge(func(t *scandv1.ScanTask) {
			t.SchemaDelta = &scandv1.SchemaDelta{Fields: foreign[:0], Nullable: []int32{5}}
		}),
		"delta changes a type": forge(func(t *scandv1.ScanTask) {
			t.SchemaDelta = &scandv1.SchemaDelta{Fields: foreign, Positions: []int32{0}}
		}),
		"delta fields not a schema": forge(func(t *scandv1.ScanTask) {
			t.SchemaDelta = &scandv1.SchemaDelta{Fields: []byte("nope"), Positions: []int32{0}}
		}),
	} {
		stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
		for err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"a.parquet"}})
	if err != nil {
		t.Fatalf("scan after forged tickets: %v", err)
	}
	defer res.release()
	if res.rows() != 100 {
		t.Fatalf("%d rows, want 100", res.rows())
	}
}

// envelopeBytes is about what signing adds to a ticket.
const envelopeBytes = 100

// testSigner signs the tickets of the servers tests start, so tests can
// open and forge them.
var testSigner = func() *ticketsign.Signer {
	ring, err := ticketsign.GenerateKeyRing()
	if err != nil {
		panic(err)
	}
	return ticketsign.NewSigner(ring)
}()

// openTestTicket verifies an anonymous caller's ticket and decodes its
// ScanTask.
func openTestTicket(t *testing.T, ticket []byte) *scandv1.ScanTask {
	t.Helper()
	payload, err := testSigner.VerifyTicket(ticket, auth.Anonymous.Name)
	if err != nil {
		t.Fatal(err)
	}
	task := &scandv1.ScanTask{}
	if err := proto.Unmarshal(payload, task); err != nil {
		t.Fatal(err)
	}
	return task
}

// signTestTicket signs payload as a ticket for the anonymous caller.
func signTestTicket(t *testing.T, payload []byte) []byte {
	t.Helper()
	env, err := testSigner.Sign(ticketsign.KindTicket, auth.Anonymous.Name, payload, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// sameFieldMetadata says whether a and b's fields have the same metadata,
// nested fields included.
func sameFieldMetadata(a, b *arrow.Schema) bool {
	for i, f := range a.Fields() {
		g := b.Field(i)
		if !f.Metadata.Equal(g.Metadata) || !arrow.TypeEqual(f.Type, g.Type, arrow.CheckMetadata()) {
			return false
		}
	}
	return true
}

// The planner writes tickets' schemas without Flight: byte for byte what
// flight.SerializeSchema writes, which clients and older replicas read.
func TestPlannerSerializesSchemasAsFlight(t *testing.T) {
	rec := sampleRecord(0, 1)
	defer rec.Release()
	mem := memory.NewGoAllocator()
	if got, want := planner.SerializeSchema(rec.Schema(), mem), flight.SerializeSchema(rec.Schema(), mem); !bytes.Equal(got, want) {
		t.Errorf("planner.SerializeSchema wrote %d bytes, flight.SerializeSchema %d, not the same", len(got), len(want))
	}
}
