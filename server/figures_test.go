package server

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/storage/local"
)

// Every stream's figures add up: each byte fetched is used, wasted or
// unused (bytes_fetched = bytes_used + bytes_wasted + bytes_unused), on
// real scans of one file and of packed small files, whole, projected,
// limited and filtered, under the IO settings that change what is
// fetched (merging, a tight budget, mapped files); and a packed
// endpoint's figures count and name every file it read.
func TestFiguresAddUp(t *testing.T) {
	dir := t.TempDir()
	rec := wideRecord(32, 8000)
	writeParquet(t, dir, "wide.parquet", rec, 1000)
	rec.Release()
	writeSmallFiles(t, dir, 18, 10)
	var small []string
	for i := range 18 {
		small = append(small, fmt.Sprintf("f/%03d.parquet", i))
	}
	requests := []struct {
		req   map[string]any
		files []string // a packed endpoint's, in order; nil: not checked
	}{
		{map[string]any{"paths": []string{"wide.parquet"}}, nil},
		{map[string]any{"paths": []string{"wide.parquet"}, "columns": []string{"c000", "c017", "c031"}, "limit": 1500}, nil},
		{map[string]any{"paths": []string{"wide.parquet"}, "filter": "c001 < 4000 AND c002 > 100"}, nil},
		{map[string]any{"paths": []string{"f/"}}, small},
		{map[string]any{"paths": []string{"f/"}, "limit": 57}, small[:6]},
		// A filtered limit keeps every file in the endpoint: those opened
		// ahead of the sixth are not read, but their fetches count.
		{map[string]any{"paths": []string{"f/"}, "filter": "id >= 0", "limit": 57}, small[:6]},
		// Statistics prune the files before 010 (ids 0..99).
		{map[string]any{"paths": []string{"f/"}, "filter": "id >= 100"}, small[10:]},
	}
	for _, setting := range []struct {
		name  string
		io    iosched.Options
		opts  []local.Option
		ahead int // Planning.FilesAhead
	}{
		{"defaults", iosched.Options{}, nil, 0},
		{"4 MiB hole", iosched.Options{Hole: 4 << 20}, nil, 0},
		{"coalescing off", iosched.Options{NoCoalesce: true}, nil, 0},
		{"small budget and requests", iosched.Options{Memory: 2 << 20, Window: 512 << 10, MaxRequest: 512 << 10}, nil, 0},
		{"mapped", iosched.Options{}, []local.Option{local.WithMmap()}, 0},
		// Files opened ahead and never read (the limit) count too.
		{"8 files ahead", iosched.Options{}, nil, 8},
	} {
		t.Run(setting.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer assertReleased(t, mem)
			cfg := Config{Mem: mem, Planning: Planning{FilesAhead: setting.ahead}}
			c := testServerWith(t, onRoot(t, dir, setting.io, cfg, setting.opts...))
			for _, tc := range requests {
				// Twice: the second scan finds the footers cached.
				for scan := range 2 {
					res, err := scanJSON(context.Background(), c, tc.req)
					if err != nil {
						t.Fatalf("%v: %v", tc.req, err)
					}
					res.release()
					var fetched int64
					for _, st := range res.stats {
						t.Logf("%v scan %d: %s: fetched %d = used %d + wasted %d + unused %d", tc.req, scan, st.Path, st.BytesFetched, st.BytesUsed, st.BytesWasted, st.BytesUnused)
						fetched += st.BytesFetched
						if st.BytesFetched != st.BytesUsed+st.BytesWasted+st.BytesUnused || st.BytesUnused < 0 || st.BytesWasted < 0 {
							t.Errorf("%v scan %d: fetched %d != used %d + wasted %d + unused %d", tc.req, scan,
								st.BytesFetched, st.BytesUsed, st.BytesWasted, st.BytesUnused)
						}
						if st.Files != int64(len(st.Paths)) || len(st.Paths) == 0 || st.Paths[0] != st.Path {
							t.Errorf("%v: files %d, paths %v, path %q: want the count of paths, the first the path",
								tc.req, st.Files, st.Paths, st.Path)
						}
					}
					if fetched == 0 && scan == 0 {
						t.Errorf("%v: nothing fetched", tc.req)
					}
					if tc.files == nil {
						continue
					}
					if len(res.stats) != 1 || !slices.Equal(res.stats[0].Paths, tc.files) {
						var got [][]string
						for _, st := range res.stats {
							got = append(got, st.Paths)
						}
						t.Errorf("%v: streams read %v, want one stream of %v", tc.req, got, tc.files)
					}
				}
			}
		})
	}
}
