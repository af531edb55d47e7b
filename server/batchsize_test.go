package server

import (
	"context"
	"fmt"
	"github.com/scand/scand/server/stream"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
)

func TestMaxMessageBytesValidation(t *testing.T) {
	dir := t.TempDir()
	rec := idRecord(0, 10)
	defer rec.Release()
	writeParquet(t, dir, "a.parquet", rec, 10)
	c, _ := checkedServer(t, dir)
	for _, tc := range []struct {
		value int64
		code  codes.Code
	}{{-1, codes.InvalidArgument}, {0, codes.OK}, {1, codes.OK}, {1 << 40, codes.OK}} {
		res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"a.parquet"}, "max_message_bytes": tc.value})
		if status.Code(err) != tc.code {
			t.Errorf("max_message_bytes %d: got %v, want %v", tc.value, err, tc.code)
		}
		if err == nil {
			res.release()
		}
	}
}

// largeClient is a stock Flight client of a checked server on dir whose
// receive limit is raised to 64 MiB, as the scand clients' is.
func largeClient(t *testing.T, dir string) (stock, large flight.Client) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() {
		assertReleased(t, mem)
	})
	_, addr := serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{Mem: mem}))
	return dialForTest(t, addr), dialForTest(t, addr, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
}

// longStrings has n rows of one string column of about 1 KiB a row.
func longStrings(n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	long := strings.Repeat("x", 1000)
	for i := 0; i < n; i++ {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%d%s", i, long))
	}
	return b.NewRecordBatch()
}

// A client that accepts larger messages gets fewer, larger batches, none
// over 3/4 of its limit and the same rows; one that says nothing keeps
// today's sizes. Wide rows test the byte target, narrow ones the row cap.
func TestLargerMessagesFewerBatches(t *testing.T) {
	dir := t.TempDir()
	wide := longStrings(20000) // about 20 MB decoded
	defer wide.Release()
	writeParquet(t, dir, "wide.parquet", wide, 20000)
	narrow := idRecord(0, 300000) // 8 bytes a row: the row cap decides
	defer narrow.Release()
	writeParquet(t, dir, "narrow.parquet", narrow, 300000)
	stock, large := largeClient(t, dir)
	ctx := context.Background()
	for _, tc := range []struct {
		path, max       string
		c               flight.Client
		wantBatches     int
		cut, wantBigger int64 // no batch over cut; some over wantBigger
		want            arrow.RecordBatch
	}{
		{path: "wide.parquet", c: stock, wantBatches: 10, cut: 3 << 20, want: wide},
		{path: "wide.parquet", max: "33554432", c: large, wantBatches: 2, cut: 24 << 20, wantBigger: 4 << 20, want: wide},
		{path: "narrow.parquet", c: stock, wantBatches: 5, cut: 3 << 20, want: narrow},
		{path: "narrow.parquet", max: "33554432", c: large, wantBatches: 1, cut: 24 << 20, wantBigger: 2 << 20, want: narrow},
	} {
		t.Run(tc.path+"/"+tc.max, func(t *testing.T) {
			req := map[string]any{"paths": []string{tc.path}}
			if tc.max != "" {
				req["max_message_bytes"] = tc.max // protojson: int64 as a string
			}
			res, err := scanJSON(ctx, tc.c, req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			checkBatches(t, res, tc.wantBatches, tc.cut, tc.wantBigger)
			got := table(t, res)
			defer got.Release()
			if !array.RecordEqual(got, tc.want) {
				t.Error("rows differ from the file's")
			}
		})
	}
}

// checkBatches checks a scan's batch count and sizes.
func checkBatches(t *testing.T, res *scanResult, wantBatches int, cut, wantBigger int64) {
	t.Helper()
	if len(res.records) != wantBatches {
		t.Errorf("%d batches, want %d", len(res.records), wantBatches)
	}
	var largest int64
	for _, r := range res.records {
		largest = max(largest, stream.BatchBytes(r))
	}
	if largest > cut {
		t.Errorf("a batch of %d bytes, over the %d cut", largest, cut)
	}
	if largest <= wantBigger {
		t.Errorf("largest batch %d bytes, want over %d", largest, wantBigger)
	}
}

// A stock 4 MiB client that asks for large messages anyway fails cleanly
// (it said it accepts them); the server's memory is all returned.
func TestLargeMessagesOverStockClient(t *testing.T) {
	dir := t.TempDir()
	wide := longStrings(20000)
	defer wide.Release()
	writeParquet(t, dir, "wide.parquet", wide, 20000)
	stock, _ := largeClient(t, dir)
	_, err := scanJSON(context.Background(), stock, map[string]any{"paths": []string{"wide.parquet"}, "max_message_bytes": 32 << 20})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("got %v, want ResourceExhausted (message larger than the client's limit)", err)
	}
}

// max_message_bytes is endpoint-wide: every file of a packed endpoint
// gets the larger batches, and so does a resumed ticket.
func TestMaxMessageBytesInTickets(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		rec := idRecord(i*100000, 100000)
		writeParquet(t, dir, fmt.Sprintf("f/%d.parquet", i), rec, 100000)
		rec.Release()
	}
	_, large := largeClient(t, dir)
	ctx := context.Background()
	req := map[string]any{"paths": []string{"f/"}, "max_message_bytes": 32 << 20}
	ticket := planTicket(ctx, t, large, req)
	task := decodeForTest(t, ticket)
	if task.MaxMessageBytes != 32<<20 || len(task.More) != 2 || task.More[0].MaxMessageBytes != 0 {
		t.Fatalf("ticket %v: want max_message_bytes on the head only, and 2 further files", task)
	}
	for _, tc := range []struct {
		offset  int64
		batches int // the files' batches gathered into one (gather.go): 300,000 rows fit the raised row cap
	}{{0, 1}, {150000, 1}} {
		tk := ticket
		if tc.offset > 0 {
			var err error
			if tk, err = resumeAction(ctx, large, ticket, tc.offset); err != nil {
				t.Fatal(err)
			}
			if got := decodeForTest(t, tk).MaxMessageBytes; got != 32<<20 {
				t.Fatalf("resumed ticket's max_message_bytes %d, want %d", got, 32<<20)
			}
		}
		ids, st := streamIDs(ctx, t, large, tk)
		if !slices.Equal(ids, seq(tc.offset, 300000)) {
			t.Errorf("offset %d: %d ids, want the rest", tc.offset, len(ids))
		}
		if st.Batches != int64(tc.batches) {
			t.Errorf("offset %d: %d batches, want %d", tc.offset, st.Batches, tc.batches)
		}
	}
}
