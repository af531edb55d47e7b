package orc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// seekFuzzFilter keeps several runs of strides of testdata/seek's files,
// the first and last included.
const seekFuzzFilter = "seq = 12345 OR seq = 33333 OR seq >= 49990 OR (seq >= 1000 AND seq < 3000) OR seq < 10"

// FuzzSeekPositions: whatever the row index positions say (each 5 bytes
// of muts picks a column, a stride and a position, and moves it by a
// delta or sets it), reading the kept strides never panics, fails, or
// returns other than the kept rows: positions the seek cannot use, or
// that make decoding fail, fall back to reading the stripe.
//
//	go test ./scanner/orc/ -run '^$' -fuzz '^FuzzSeekPositions$' -fuzztime 1m
func FuzzSeekPositions(f *testing.F) {
	names := []string{"seek_uncompressed.orc", "seek_zstd.orc"}
	files := map[string][]byte{}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "seek", n))
		if err != nil {
			f.Skip(err)
		}
		files[n] = data
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{})
	f.Add(uint8(0), []byte{0, 12, 0, 1, 0})                // seq DATA one byte on
	f.Add(uint8(1), []byte{2, 33, 1, 0x10, 0})             // x: offset in chunk
	f.Add(uint8(1), []byte{4, 3, 0x83, 0xff, 0xff})        // s: set a position
	f.Add(uint8(0), []byte{6, 49, 2, 3, 0, 5, 1, 0, 2, 0}) // d, b: RLE state
	f.Fuzz(func(t *testing.T, which uint8, muts []byte) {
		ctx := context.Background()
		name := names[int(which)%len(names)]
		file, err := Open(ctx, name, &memSource{data: files[name]}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		p, err := file.Project(seekColumns)
		if err != nil {
			t.Fatal(err)
		}
		impl := p.Impl.(*projection)
		keep, _, ix, err := file.selectStrides(ctx, 0, bindSQL(t, file, seekFuzzFilter), impl.ids())
		if err != nil || keep == nil {
			t.Fatalf("kept %v: %v", keep, err)
		}
		mutatePositions(ix, impl.ids(), muts)
		rows := int64(0)
		emit := func(rec arrow.RecordBatch) error {
			rows += rec.NumRows()
			rec.Release()
			return nil
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		c, sc, acct := file.newCodec(), &scratch{}, &account{ctx: ctx}
		defer acct.releaseAll()
		rest, err := file.readStripeSeeking(ctx, 0, ix, impl, p.Schema, mem, c, sc, acct, 1024, keep, emit)
		if err == nil && rest != nil {
			var data []byte
			err = file.readStripe(ctx, 0, impl, p.Schema, mem, c, &data, sc, acct, 1024, rest, emit)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		for _, r := range keep {
			want += r.end - r.start
		}
		if rows != want {
			t.Errorf("%d rows, want %d", rows, want)
		}
	})
}

// mutatePositions applies muts, 5 bytes each: column (index into ids),
// stride, position (high bit: set rather than add), then a little-endian
// int16 delta or uint16 value.
func mutatePositions(ix *stripeIndex, ids []int, muts []byte) {
	for ; len(muts) >= 5; muts = muts[5:] {
		pos := ix.positions[ids[int(muts[0])%len(ids)]]
		if len(pos) == 0 {
			continue
		}
		entry := pos[int(muts[1])%len(pos)]
		if len(entry) == 0 {
			continue
		}
		i := int(muts[2]&0x7f) % len(entry)
		v := uint16(muts[3]) | uint16(muts[4])<<8
		if muts[2]&0x80 != 0 {
			entry[i] = uint64(v)
		} else {
			entry[i] += uint64(int64(int16(v)))
		}
	}
}
