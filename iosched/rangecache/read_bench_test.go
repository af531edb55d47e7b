package rangecache

import (
	"context"
	"testing"

	"github.com/scand/scand/storage"
)

// BenchmarkReadWarm measures a warm read's cost per byte in each tier: 8
// MiB requests (a column chunk's) over a 64 MiB object, every page cached.
//
//	go test ./iosched/rangecache -run '^$' -bench ReadWarm -cpuprofile cpu.out
func BenchmarkReadWarm(b *testing.B) {
	const size, req = 64 << 20, 8 << 20
	tiers := map[string]Options{
		"memory": {MemoryBytes: 2 * size},
		"disk":   {DiskBytes: 2 * size},
	}
	for name, opts := range tiers {
		b.Run(name, func(b *testing.B) {
			if opts.DiskBytes > 0 {
				opts.Dir = b.TempDir()
			}
			opts.Logger = quietLog()
			c, err := Open(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s := newStore(size)
			o := s.object("v")
			buf := make([]byte, req)
			readAll := func() {
				for off := int64(0); off < size; off += req {
					if _, err := c.Read(context.Background(), o, []storage.Span{{Off: off, Buf: buf}}, s.fetch); err != nil {
						b.Fatal(err)
					}
				}
			}
			readAll()
			flush(c)
			readAll() // the disk tier's pages are now hit once (S3-FIFO's main queue)
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				readAll()
			}
			b.StopTimer()
			if st := c.Stats(); st.FetchedBytes != size {
				b.Fatalf("%d bytes fetched, want %d: not warm", st.FetchedBytes, size)
			}
		})
	}
}
