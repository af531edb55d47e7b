package orc

import (
	"context"
	"encoding/binary"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fileChunks returns the compressed chunks of every stream of an ORC file
// (index and data, every stripe) and each one's decompressed size, with
// the file's codec. Chunks stored uncompressed are left out.
func fileChunks(t testing.TB, path string) (*codec, [][]byte, []int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), path, &memSource{data: data}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, len(f.ft.stripes))
	for i := range all {
		all[i] = i
	}
	if err := f.loadFooters(all); err != nil {
		t.Fatal(err)
	}
	c := f.newCodec()
	if c == nil {
		t.Fatalf("%s is not compressed", path)
	}
	var chunks [][]byte
	var sizes []int
	for i, s := range f.ft.stripes {
		off := s.offset
		for _, st := range f.footers[i].Load().streams {
			raw := data[off : off+st.length]
			off += st.length
			for len(raw) >= 3 {
				h := int(raw[0]) | int(raw[1])<<8 | int(raw[2])<<16
				n := h >> 1
				chunk := raw[3 : 3+n]
				raw = raw[3+n:]
				if h&1 == 1 {
					continue
				}
				out, err := c.decompress(chunk, nil, c.blockSize)
				if err != nil {
					t.Fatal(err)
				}
				chunks, sizes = append(chunks, chunk), append(sizes, len(out))
			}
		}
	}
	return c, chunks, sizes
}

// TestDumpChunks writes the compressed chunks of $ORC_CHUNKS_FILE to
// $ORC_CHUNKS_OUT, each as its compressed and decompressed lengths
// (little-endian uint32) and its bytes, for bench/orc/codecs.py to
// decompress with pyarrow's codec (the C++ library pyarrow.orc uses) on
// the same bytes as BenchmarkFileChunks. Skipped without the variables.
func TestDumpChunks(t *testing.T) {
	in, out := os.Getenv("ORC_CHUNKS_FILE"), os.Getenv("ORC_CHUNKS_OUT")
	if in == "" || out == "" {
		t.Skip("ORC_CHUNKS_FILE and ORC_CHUNKS_OUT name the file and the dump")
	}
	_, chunks, sizes := fileChunks(t, in)
	var b []byte
	for i, c := range chunks {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(c)))
		b = binary.LittleEndian.AppendUint32(b, uint32(sizes[i]))
		b = append(b, c...)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkFileChunks decompresses every chunk of $ORC_CHUNKS_FILE as the
// reader does (codec.decompress into a reused buffer); bytes are the
// decompressed bytes. Compare with bench/orc/codecs.py on the dump of
// TestDumpChunks:
//
//	ORC_CHUNKS_FILE=x.orc go test ./scanner/orc -run XXX -bench FileChunks -cpu 1 -count 5
func BenchmarkFileChunks(b *testing.B) {
	in := os.Getenv("ORC_CHUNKS_FILE")
	if in == "" {
		b.Skip("ORC_CHUNKS_FILE names an ORC file")
	}
	c, chunks, sizes := fileChunks(b, in)
	total := 0
	for _, n := range sizes {
		total += n
	}
	dst := make([]byte, 0, c.blockSize+decompressSlack)
	b.SetBytes(int64(total))
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	defer func() {
		// Per second of CPU time, as codecs.py measures, which a loaded
		// machine moves less than wall time.
		b.ReportMetric(float64(total)*float64(b.N)/1e6/(cpuSeconds()-cpu0), "MB/cpu-s")
	}()
	for b.Loop() {
		for _, chunk := range chunks {
			out, err := c.decompress(chunk, dst, c.blockSize)
			if err != nil {
				b.Fatal(err)
			}
			dst = out[:0]
		}
	}
}
