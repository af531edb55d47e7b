package server

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
)

// overwritingBucket, once armed, writes another file's bytes over a file
// in place right after opening it: a mapping then shows the new bytes
// where the cached footer expects the old layout.
type overwritingBucket struct {
	*local.Bucket
	dir   string
	with  []byte
	armed atomic.Bool
}

func (b *overwritingBucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	o, err := b.Bucket.Open(ctx, info)
	if err == nil && b.armed.CompareAndSwap(true, false) {
		f, ferr := os.OpenFile(filepath.Join(b.dir, info.Name), os.O_WRONLY, 0)
		if ferr == nil {
			_, ferr = f.WriteAt(b.with, 0)
			f.Close()
		}
		if ferr != nil {
			o.Close()
			return nil, ferr
		}
	}
	return o, err
}

// A mapped file overwritten in place during a scan by one of another
// layout decodes as garbage; the scan fails with FAILED_PRECONDITION (the
// file changed), as a pread scan does, not DATA_LOSS.
func TestMappedFileOverwrittenDuringScan(t *testing.T) {
	dir := t.TempDir()
	rec := wideRecord(8, 40_000)
	defer rec.Release()
	writeParquet(t, dir, "victim.parquet", rec, 10_000)
	other := wideRecord(8, 40_000)
	defer other.Release()
	writeParquet(t, dir, "layout.parquet", other, 3_000) // other row groups, other offsets
	with, err := os.ReadFile(filepath.Join(dir, "layout.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]local.Option{{local.WithMmap()}, nil} {
		lb, err := local.New(dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		writeParquet(t, dir, "victim.parquet", rec, 10_000)
		b := &overwritingBucket{Bucket: lb, dir: dir, with: with}
		c := testServerWith(t, Config{Bucket: b})
		ctx := context.Background()
		info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths":["victim.parquet"]}`)})
		if err != nil {
			t.Fatal(err)
		}
		b.armed.Store(true) // DoGet's Open overwrites; the footer is cached
		stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
		for err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.FailedPrecondition {
			t.Errorf("mmap %v: DoGet of a file overwritten in place: %v, want FailedPrecondition", opts != nil, err)
		}
	}
}
