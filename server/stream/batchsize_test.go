package stream

import (
	"testing"

	"github.com/scand/scand/scanner"
)

func TestMessageSizeFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		clientMax int64
		want      messageSize
	}{
		{0, messageSize{target: 2 * mib, cut: 3 * mib, rows: 64 << 10}},  // today's sizes
		{-1, messageSize{target: 2 * mib, cut: 3 * mib, rows: 64 << 10}}, // a ticket's: never written
		{1 * mib, messageSize{target: 2 * mib, cut: 3 * mib, rows: 64 << 10}},
		{4 * mib, messageSize{target: 2 * mib, cut: 3 * mib, rows: 64 << 10}},
		{6 * mib, messageSize{target: 3 * mib, cut: 4*mib + mib/2, rows: 96 << 10}},
		{32 * mib, messageSize{target: 16 * mib, cut: 24 * mib, rows: 512 << 10}},
		{64 * mib, messageSize{target: 32 * mib, cut: 48 * mib, rows: 1 << 20}},
		{1 << 40, messageSize{target: 32 * mib, cut: 48 * mib, rows: 1 << 20}},
	} {
		if got := messageSizeFor(tc.clientMax); got != tc.want {
			t.Errorf("messageSizeFor(%d) = %+v, want %+v", tc.clientMax, got, tc.want)
		}
	}
}

// The admission estimate follows the batch target: a stream with larger
// messages is charged for its larger batches (three in flight without
// read-ahead), and the row cap bounds narrow rows.
func TestStreamWorkBytesFollowsTarget(t *testing.T) {
	wide := &scanner.Projection{Groups: []scanner.Group{{Rows: 1 << 20, MemBytes: 1 << 30, WorkBytes: 1 << 20}}}    // 1 KiB rows
	narrow := &scanner.Projection{Groups: []scanner.Group{{Rows: 4 << 20, MemBytes: 32 << 20, WorkBytes: 1 << 20}}} // 8 B rows
	for _, tc := range []struct {
		name      string
		p         *scanner.Projection
		clientMax int64
		wantRows  int64
	}{
		{"wide, stock", wide, 0, 2 << 10},
		{"wide, 8 MiB", wide, 8 << 20, 4 << 10},
		{"wide, 64 MiB", wide, 64 << 20, 32 << 10},
		{"narrow, stock", narrow, 0, 64 << 10}, // the row cap
		{"narrow, 32 MiB", narrow, 32 << 20, 512 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := batchRowsFor(tc.p, []int{0}, messageSizeFor(tc.clientMax))
			if rows != tc.wantRows {
				t.Fatalf("batchRowsFor = %d, want %d", rows, tc.wantRows)
			}
			g := tc.p.Groups[0]
			want := g.WorkBytes + 3*(g.MemBytes/g.Rows*rows)
			if got := streamWorkBytes(tc.p, []int{0}, rows, false); got != want {
				t.Errorf("streamWorkBytes = %d, want %d", got, want)
			}
		})
	}
}

// Whatever a ticket or request says, batch sizes stay within what the
// server allows: 2..32 MiB targets, cut at 3/2 of the target, 64 Ki..1 Mi
// rows.
func FuzzMessageSizeFor(f *testing.F) {
	for _, v := range []int64{0, -1, 1, 4 << 20, 6<<20 + 1, 64 << 20, 1 << 62, -1 << 63} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, clientMax int64) {
		s := messageSizeFor(clientMax)
		if s.target < 2<<20 || s.target > 32<<20 || s.cut != s.target/2*3 || s.rows < maxBatchRows || s.rows > maxScaledBatchRows {
			t.Fatalf("messageSizeFor(%d) = %+v", clientMax, s)
		}
	})
}

// TestStreamWorkBytesChargesReadAhead: read-ahead holds one batch more,
// and the admission estimate says so.
func TestStreamWorkBytesChargesReadAhead(t *testing.T) {
	p := &scanner.Projection{Groups: []scanner.Group{{Rows: 1000, MemBytes: 100_000, WorkBytes: 5000}}}
	for _, tc := range []struct {
		name      string
		batchRows int64
		readAhead bool
		want      int64
	}{
		{"whole group, sequential", 0, false, 5000 + 3*100_000},
		{"whole group, read-ahead", 0, true, 5000 + 4*100_000},
		{"batches of 100, sequential", 100, false, 5000 + 3*10_000},
		{"batches of 100, read-ahead", 100, true, 5000 + 4*10_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := streamWorkBytes(p, []int{0}, tc.batchRows, tc.readAhead); got != tc.want {
				t.Errorf("streamWorkBytes = %d, want %d", got, tc.want)
			}
		})
	}
}
