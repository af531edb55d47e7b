package iosched

import (
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

func TestHolePolicy(t *testing.T) {
	local := storage.Capabilities{Local: true}
	mapped := storage.Capabilities{Local: true, Mapped: true}
	s3 := storage.Capabilities{SpanReads: true}
	for _, tc := range []struct {
		name string
		p    holePolicy
		want int64
	}{
		{"local: learned MaxHole is ignored", holePolicy{caps: local, learned: MaxHole, parallel: 16}, LocalHole},
		{"local: before anything is learned", holePolicy{caps: local, learned: defaultHole, parallel: 16}, LocalHole},
		{"local, selective", holePolicy{caps: local, learned: MaxHole, parallel: 16, selective: true}, LocalHole},
		{"mapped", holePolicy{caps: mapped, learned: 8 << 20, parallel: 16}, LocalHole},
		{"remote: the learned hole", holePolicy{caps: s3, learned: 4 << 20, parallel: 16}, 4 << 20},
		{"remote without span reads: the learned hole", holePolicy{learned: 3 << 20, parallel: 16}, 3 << 20},
		{"remote, selective: learned / parallel", holePolicy{caps: s3, learned: 4 << 20, parallel: 16, selective: true}, 256 << 10},
		{"remote, selective: capped", holePolicy{caps: s3, learned: MaxHole, parallel: 16, selective: true}, MaxSelectiveHole},
		{"remote, selective: at least MinHole", holePolicy{caps: s3, learned: 32 << 10, parallel: 16, selective: true}, MinHole},
		{"remote, selective: never above the learned hole", holePolicy{caps: s3, learned: MinHole, parallel: 1, selective: true}, MinHole},
		{"remote, selective, one request at a time", holePolicy{caps: s3, learned: 512 << 10, parallel: 1, selective: true}, 512 << 10},
		{"remote, selective, parallel unset", holePolicy{caps: s3, learned: 512 << 10, selective: true}, 512 << 10},
	} {
		if got := tc.p.hole(); got != tc.want {
			t.Errorf("%s: hole = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// The policy as the scheduler applies it: a local file's column chunks
// 1 MiB apart are read one request each, however large the learned hole;
// a remote file's merge across the learned hole, except for a selective
// plan, whose pages far apart stay apart.
func TestHoleByStore(t *testing.T) {
	data := pattern(8 << 20)
	var ranges []Range
	for off := int64(0); off+(64<<10) <= int64(len(data)); off += 1 << 20 {
		ranges = append(ranges, Range{Off: off, Len: 64 << 10})
	}
	for _, tc := range []struct {
		name      string
		caps      storage.Capabilities
		selective bool
		reads     int64
	}{
		{"local", storage.Capabilities{Local: true}, false, int64(len(ranges))},
		{"remote", storage.Capabilities{SpanReads: true}, false, 1},
		{"remote, selective", storage.Capabilities{SpanReads: true}, true, int64(len(ranges))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := storagetest.NewMem(map[string][]byte{"f": data})
			mem.SetCapabilities(tc.caps)
			s := New(mem, Options{TailSize: 1})
			m := s.model("f")
			for i := range samples { // a remote store: 20 ms + 100 MB/s, hole 2 MB
				n := int64(i%8+1) << 20
				m.observe(n, time.Duration((0.020+float64(n)/100e6)*float64(time.Second)))
			}
			f := openFile(t, s, mem, "f")
			defer f.Close()
			if tc.selective {
				f.PrefetchSelective(ranges)
			} else {
				f.Prefetch(ranges)
			}
			for _, r := range ranges {
				if _, err := f.ReadAt(make([]byte, r.Len), r.Off); err != nil {
					t.Fatal(err)
				}
			}
			st := f.Stats()
			if st.Reads != tc.reads {
				t.Errorf("%d reads, want %d (hole %d)", st.Reads, tc.reads, st.Hole)
			}
			if tc.reads > 1 && st.BytesFetched != st.BytesUsed {
				t.Errorf("fetched %d bytes, used %d", st.BytesFetched, st.BytesUsed)
			}
		})
	}
}
