package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

// The local read modes return the same rows, and neither leaves Arrow
// memory outstanding; an unknown mode is refused.
func TestLocalReadModes(t *testing.T) {
	dir := t.TempDir()
	rec := wideRecord(16, 20_000)
	defer rec.Release()
	writeParquet(t, dir, "wide.parquet", rec, 5_000)
	req := map[string]any{"paths": []string{"wide.parquet"}, "columns": []string{"c001", "c007", "c015"}}
	var tables []string
	for _, mode := range []local.ReadMode{local.ReadPread, local.ReadMmap} {
		t.Run("mode "+mode.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			var opts []local.Option
			if mode == local.ReadMmap {
				opts = append(opts, local.WithMmap())
			}
			c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Mem: mem}, opts...))
			res, err := scanJSON(context.Background(), c, req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.release()
			tbl := table(t, res)
			defer tbl.Release()
			js, _ := tbl.MarshalJSON()
			tables = append(tables, string(js))
			if len(res.stats) == 0 || res.stats[len(res.stats)-1].BytesUsed == 0 {
				t.Errorf("stats = %+v, want bytes used", res.stats)
			}
			assertReleased(t, mem)
		})
	}
	for i := 1; i < len(tables); i++ {
		if tables[i] != tables[0] {
			t.Errorf("local read mode %d returned different rows", i)
		}
	}
}

// truncatingBucket truncates a file right after opening it once armed: the
// mapping then has pages the file no longer has.
type truncatingBucket struct {
	*local.Bucket
	dir   string
	armed atomic.Bool
}

func (b *truncatingBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Bucket.Open(ctx, info)
	if err == nil && b.armed.CompareAndSwap(true, false) {
		if err := os.Truncate(filepath.Join(b.dir, info.Name), 0); err != nil {
			o.Close()
			return nil, err
		}
	}
	return o, err
}

// A mapped file truncated during a scan faults (SIGBUS) when the decoder
// reads it. That fails this stream with FAILED_PRECONDITION, and the server
// goes on serving.
func TestMappedFileTruncatedDuringScan(t *testing.T) {
	dir := t.TempDir()
	rec := wideRecord(8, 40_000)
	defer rec.Release()
	writeParquet(t, dir, "victim.parquet", rec, 10_000)
	writeParquet(t, dir, "other.parquet", rec, 10_000)
	lb, err := local.New(dir, local.WithMmap())
	if err != nil {
		t.Fatal(err)
	}
	b := &truncatingBucket{Bucket: lb, dir: dir}
	c := testServerWith(t, Config{Bucket: b})
	ctx := context.Background()
	cmd := []byte(`{"paths":["victim.parquet"]}`)
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	b.armed.Store(true) // DoGet's Open truncates; the footer is cached
	stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	for err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "SIGBUS") {
		t.Errorf("DoGet of a file truncated while mapped: %v, want FailedPrecondition", err)
	}
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"other.parquet"}})
	if err != nil {
		t.Fatalf("scan after the fault: %v", err)
	}
	defer res.release()
	if res.rows() != rec.NumRows() {
		t.Errorf("scan after the fault: %d rows, want %d", res.rows(), rec.NumRows())
	}
}
