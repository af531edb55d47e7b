package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/wire"
)

// resumeAction calls the resume action with a binary ResumeRequest.
func resumeAction(ctx context.Context, c flight.Client, ticket []byte, offset int64) ([]byte, error) {
	body, err := proto.Marshal(&scandv1.ResumeRequest{Ticket: ticket, Offset: offset})
	if err != nil {
		return nil, err
	}
	stream, err := c.DoAction(ctx, &flight.Action{Type: "resume", Body: body})
	if err != nil {
		return nil, err
	}
	res, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if err := flight.ReadUntilEOF(stream); err != nil {
		return nil, err
	}
	out := &scandv1.ResumeResult{}
	if err := proto.Unmarshal(res.Body, out); err != nil {
		return nil, err
	}
	return out.Ticket, nil
}

// streamIDs redeems one ticket and returns its "id" column and figures.
func streamIDs(ctx context.Context, t *testing.T, c flight.Client, ticket []byte) ([]int64, *scandv1.StreamStats) {
	t.Helper()
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	ids := []int64{}
	var st *scandv1.StreamStats
	for rdr.Next() {
		ids = append(ids, int64Column(t, rdr.RecordBatch(), "id")...)
		if meta := rdr.LatestAppMetadata(); len(meta) > 0 {
			if st, err = wire.UnmarshalStats(meta); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return ids, st
}

// planTicket plans req and returns its only endpoint's ticket.
func planTicket(ctx context.Context, t *testing.T, c flight.Client, req map[string]any) []byte {
	t.Helper()
	res, err := scanJSON(ctx, c, req)
	if err != nil {
		t.Fatal(err)
	}
	res.release()
	if len(res.info.Endpoint) != 1 {
		t.Fatalf("%d endpoints, want 1", len(res.info.Endpoint))
	}
	return res.info.Endpoint[0].Ticket.Ticket
}

// Resuming at every offset of a 5-row-group file gives exactly the rest
// of the rows, with and without a filter and a limit, batches cut across
// row groups (7 rows) so that the offset falls inside batches.
func TestResumeAtEveryOffset(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 20)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	tests := []struct {
		name  string
		req   map[string]any
		bound int64 // the largest offset the action accepts
	}{
		{"all rows", map[string]any{}, 100},
		{"limit", map[string]any{"limit": 45}, 45},
		{"filter", map[string]any{"filter": "name IS NOT NULL AND id < 90"}, 100},
		{"filter and limit", map[string]any{"filter": "name IS NOT NULL", "limit": 50}, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := map[string]any{"paths": []string{"a.parquet"}, "columns": []string{"id", "name"}, "batch_rows": 7}
			for k, v := range tt.req {
				req[k] = v
			}
			ticket := planTicket(ctx, t, c, req)
			want, _ := streamIDs(ctx, t, c, ticket)
			for off := int64(0); off <= tt.bound; off++ {
				resumed, err := resumeAction(ctx, c, ticket, off)
				if err != nil {
					t.Fatalf("resume at %d: %v", off, err)
				}
				got, _ := streamIDs(ctx, t, c, resumed)
				rest := want[min(int(off), len(want)):]
				if !slices.Equal(got, rest) {
					t.Fatalf("resumed at %d: got %v, want %v", off, got, rest)
				}
			}
			_, err := resumeAction(ctx, c, ticket, tt.bound+1)
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("resume past the end: %v, want InvalidArgument", err)
			}
		})
	}
}

// A resumed stream without a filter does not decode the row groups it
// skips whole, and a ticket resumed again counts from the task's start.
func TestResumeSkipsWholeRowGroups(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 100)
	writeParquet(t, dir, "a.parquet", rec, 20)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"a.parquet"}, "columns": []string{"id"}})
	first, err := resumeAction(ctx, c, ticket, 65)
	if err != nil {
		t.Fatal(err)
	}
	ids, st := streamIDs(ctx, t, c, first)
	if len(ids) != 35 || ids[0] != 65 {
		t.Fatalf("got %d rows from %v, want 35 from 65", len(ids), ids[:min(1, len(ids))])
	}
	if st.RowsRead != 40 {
		t.Errorf("rows_read %d: want 40, the last two row groups only", st.RowsRead)
	}
	again, err := resumeAction(ctx, c, first, 10) // offset from the start, not from 65
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := streamIDs(ctx, t, c, again); len(ids) != 90 || ids[0] != 10 {
		t.Fatalf("resumed again at 10: %d rows from %v, want 90 from 10", len(ids), ids[:min(1, len(ids))])
	}
}

func TestResumeErrors(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 30)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"a.parquet"}})
	tampered := slices.Clone(ticket)
	tampered[len(tampered)/2] ^= 1
	other, err := testSigner.Sign(ticketsign.KindTicket, "someone-else", ticketPayloadForTest(t, ticket), ticketsign.DefaultTicketTTL)
	if err != nil {
		t.Fatal(err)
	}
	binary := func(ticket []byte, off int64) []byte {
		b, _ := proto.Marshal(&scandv1.ResumeRequest{Ticket: ticket, Offset: off})
		return b
	}
	tests := []struct {
		name string
		body []byte
		code codes.Code
	}{
		{"negative offset", binary(ticket, -1), codes.InvalidArgument},
		{"past the end", binary(ticket, 31), codes.InvalidArgument},
		{"no ticket", binary(nil, 3), codes.InvalidArgument},
		{"garbage", []byte{0xff, 0xff, 0xff}, codes.InvalidArgument},
		{"bad JSON", []byte(`{"ticket": 3}`), codes.InvalidArgument},
		{"tampered ticket", binary(tampered, 3), codes.Unauthenticated},
		{"unsigned ticket", binary(ticketPayloadForTest(t, ticket), 3), codes.Unauthenticated},
		{"other identity", binary(other, 3), codes.PermissionDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, err := c.DoAction(ctx, &flight.Action{Type: "resume", Body: tt.body})
			if err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != tt.code {
				t.Fatalf("err = %v, want %v", err, tt.code)
			}
		})
	}
}

// The action answers JSON with JSON, for clients without protobuf.
func TestResumeJSON(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 30)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	ctx := context.Background()
	ticket := planTicket(ctx, t, c, map[string]any{"paths": []string{"a.parquet"}})
	body, _ := protojson.Marshal(&scandv1.ResumeRequest{Ticket: ticket, Offset: 12})
	stream, err := c.DoAction(ctx, &flight.Action{Type: "resume", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	res, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	out := &scandv1.ResumeResult{}
	if err := protojson.Unmarshal(res.Body, out); err != nil {
		t.Fatalf("answer %q is not JSON: %v", res.Body, err)
	}
	ids, _ := streamIDs(ctx, t, c, out.Ticket)
	if fmt.Sprint(ids) != fmt.Sprint(seq(12, 30)) {
		t.Fatalf("got %v", ids)
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// ticketPayloadForTest is the ScanTask inside a signed ticket.
func ticketPayloadForTest(t *testing.T, ticket []byte) []byte {
	t.Helper()
	claims, err := testSigner.Open(ticketsign.KindTicket, ticket)
	if err != nil {
		t.Fatal(err)
	}
	return claims.Payload
}

// FuzzParseResume feeds arbitrary action bodies to the resume request
// parser: it must not panic, and what it accepts has a ticket and an
// offset >= 0.
func FuzzParseResume(f *testing.F) {
	bin, _ := proto.Marshal(&scandv1.ResumeRequest{Ticket: []byte("t"), Offset: 5})
	js, _ := protojson.Marshal(&scandv1.ResumeRequest{Ticket: []byte("t"), Offset: 5})
	for _, seed := range [][]byte{bin, js, nil, []byte("{"), []byte(`{"offset": -1, "ticket": "dA=="}`), []byte("\n{garbage")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _, err := parseResume(body)
		if err != nil {
			return
		}
		if len(req.Ticket) == 0 || req.Offset < 0 {
			t.Fatalf("accepted %+v", req)
		}
	})
}
