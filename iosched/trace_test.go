package iosched

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The golden trace pins the requests a scan sends for typical layouts and
// holes: the planner (Coalesce, readahead, demand fetches, parts, dropped
// gaps) driven by a decoder that reads every announced range in order,
// with fetches completing in the order they started. It runs the same
// planner steps File runs, without IO; a change to any of them that
// changes a GET shows up as a diff of testdata/trace.golden (go test -run
// TestTraceGolden -update rewrites it).

const traceKiB, traceMiB = 1 << 10, 1 << 20

// traceOpts are the scheduler options a trace runs with.
type traceOpts struct {
	hole, maxRequest int64 // hole -1: NoCoalesce
	window, budget   int64
	inflight         int
	tolerance        float64
}

var traceDefaults = traceOpts{maxRequest: DefaultMaxRequest, window: DefaultWindow, budget: DefaultMemory / 2, inflight: DefaultConcurrency, tolerance: DefaultTolerance}

// parquetLayout is a file of groups row groups of cols column chunks of
// chunk bytes each after a 4-byte magic; ranges are the chunks of every
// step-th column, in reading order (row group by row group).
func parquetLayout(groups, cols, step int, chunk int64) []Range {
	var rs []Range
	for g := range groups {
		for c := 0; c < cols; c += step {
			rs = append(rs, Range{Off: 4 + int64(g*cols+c)*chunk, Len: chunk})
		}
	}
	return rs
}

// orcLayout is a file of stripes, each with an index section, then per
// column a PRESENT (1 KiB), DATA (data bytes) and LENGTH (4 KiB) stream,
// then a stripe footer; ranges are the data streams of the projected
// columns, stripe by stripe.
func orcLayout(stripes, cols int, data int64, projected ...int) []Range {
	const index, present, length, footer = 16 * traceKiB, 1 * traceKiB, 4 * traceKiB, 2 * traceKiB
	var rs []Range
	off := int64(3) // "ORC"
	for range stripes {
		off += index
		for c := range cols {
			streams := []Range{{Off: off, Len: present}, {Off: off + present, Len: data}, {Off: off + present + data, Len: length}}
			off += present + data + length
			for _, p := range projected {
				if p == c {
					rs = append(rs, streams...)
				}
			}
		}
		off += footer
	}
	return rs
}

func TestTraceGolden(t *testing.T) {
	with := func(o traceOpts, f func(*traceOpts)) traceOpts { f(&o); return o }
	hole := func(h int64) traceOpts { return with(traceDefaults, func(o *traceOpts) { o.hole = h }) }
	noCoalesce := hole(-1)
	maxReq512K := func(o *traceOpts) { o.hole, o.maxRequest = traceMiB, 512*traceKiB }
	parquetAlt := parquetLayout(4, 8, 2, 128*traceKiB)
	orc := orcLayout(3, 4, 200*traceKiB, 0, 2)
	huge := []Range{{Off: 4, Len: 40 * traceMiB}, {Off: 4 + 40*traceMiB, Len: 64 * traceKiB}, {Off: 4 + 40*traceMiB + 96*traceKiB, Len: 64 * traceKiB}}
	cases := []struct {
		name   string
		layout []Range
		opts   traceOpts
	}{
		{"parquet 4 groups x 8 columns of 128 KiB, alternate columns, no coalescing", parquetAlt, noCoalesce},
		{"parquet alternate, hole 8 KiB", parquetAlt, hole(8 * traceKiB)},
		{"parquet alternate, hole 1 MiB", parquetAlt, hole(1 * traceMiB)},
		{"parquet alternate, hole 1 MiB, max request 512 KiB", parquetAlt, with(traceDefaults, maxReq512K)},
		{"parquet alternate, hole 1 MiB, max request 512 KiB, window 1 MiB, inflight 2", parquetAlt, with(with(traceDefaults, maxReq512K), func(o *traceOpts) { o.window, o.inflight = traceMiB, 2 })},
		{"parquet alternate, hole 1 MiB, max request 512 KiB, budget 1 MiB", parquetAlt, with(with(traceDefaults, maxReq512K), func(o *traceOpts) { o.budget = traceMiB })},
		{"parquet alternate, hole 1 MiB, budget 1 MiB: a request over the whole budget", parquetAlt, with(hole(traceMiB), func(o *traceOpts) { o.budget = traceMiB })},
		{"parquet all 8 columns of 16 KiB, hole 0", parquetLayout(2, 8, 1, 16*traceKiB), hole(0)},
		{"orc 3 stripes x 4 columns of 200 KiB, columns 0 and 2, hole 8 KiB", orc, hole(8 * traceKiB)},
		{"orc columns 0 and 2, hole 4 MiB", orc, hole(4 * traceMiB)},
		{"one huge 40 MiB chunk and two small ones, hole 1 MiB", huge, hole(traceMiB)},
		{"one huge chunk, hole 64 KiB, tolerance 0.1", huge, with(hole(64*traceKiB), func(o *traceOpts) { o.tolerance = 0.1 })},
	}
	var out strings.Builder
	for _, tc := range cases {
		fmt.Fprintf(&out, "# %s\n", tc.name)
		for _, line := range traceScan(tc.layout, tc.opts) {
			fmt.Fprintf(&out, "%s\n", line)
		}
		out.WriteString("\n")
	}
	const golden = "testdata/trace.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("trace differs from %s (-update rewrites it after review):\n%s", golden, lineDiff(string(want), got))
	}
}

// traceScan plans layout and reads it in order, and returns the requests
// sent: readahead and demand fetches as the planner starts them (with the
// number of ranges the decoder had read by then), and direct reads of
// ranges the plan does not hold.
func traceScan(layout []Range, o traceOpts) []string {
	s := &traceSim{plannerRun: plannerRun{lim: limits{window: o.window, inflight: o.inflight}, total: o.budget}, opts: o}
	maxReq := o.maxRequest
	if o.hole < 0 {
		maxReq = 1
	}
	s.pl.add(Coalesce(layout, o.hole, maxReq), o.hole)
	s.readahead()
	for _, r := range layout {
		if !s.read(r) {
			break
		}
		s.reads++
	}
	s.give(s.pl.close())
	s.log = append(s.log, fmt.Sprintf("total: %d GETs, %d bytes, %d needed, %d gap; planned %d, wasted %d; budget held at the end %d",
		s.gets, s.bytes, s.needed, s.bytes-s.needed, s.pl.planned, s.pl.wasted, s.inUse))
	return s.log
}

// traceSim is a decoder reading through the planner, and a store whose
// fetches complete in the order they started.
type traceSim struct {
	plannerRun
	opts                traceOpts
	queue               []*pending // readahead fetches in flight, oldest first
	log                 []string
	gets, bytes, needed int64
	reads               int // ranges the decoder has read so far
}

func (s *traceSim) get(p *pending, how string) {
	r := p.req
	line := fmt.Sprintf("GET off=%d len=%d needed=%d gap=%d ranges=%d %s after %d reads", r.Off, r.Len, r.Needed, r.Len-r.Needed, len(r.Ranges), how, s.reads)
	parts := parts(r, s.opts.maxRequest)
	switch {
	case dropsGaps(r, s.opts.tolerance) && r.Len <= s.opts.maxRequest:
		line += " spans (gaps dropped while reading)"
	case dropsGaps(r, s.opts.tolerance):
		line += " (gaps dropped after the fetch)"
	}
	if len(parts) > 1 {
		line += fmt.Sprintf(" in %d parts", len(parts))
	}
	s.log = append(s.log, line)
	s.gets += int64(len(parts))
	s.bytes += r.Len
	s.needed += r.Needed
}

func (s *traceSim) readahead() {
	for _, p := range s.pl.readahead(s.lim, s.tryBudget) {
		s.get(p, "readahead")
		s.queue = append(s.queue, p)
	}
}

// complete ends the fetch of p as File.fill does on success.
func (s *traceSim) complete(p *pending) {
	s.inUse -= s.pl.fetched(p, dropsGaps(p.req, s.opts.tolerance))
	s.readahead()
}

// read serves r as File.readPlanned does, with waits resolved by
// completing fetches and a short budget by reading directly; false when
// the read fails.
func (s *traceSim) read(r Range) bool {
	for {
		p, found := s.pl.lookup(r.Off, r.Len)
		switch found {
		case foundReady:
			s.give(s.pl.consume(p, r.Len))
			s.readahead()
			return true
		case foundFetching:
			q := s.queue[0]
			s.queue = s.queue[1:]
			s.complete(q)
		case foundIdle:
			if p.req.Len > s.total {
				// File's wait for budget fails at once: ErrOverBudget.
				s.log = append(s.log, fmt.Sprintf("READ off=%d len=%d fails: its request of %d bytes is over the budget", r.Off, r.Len, p.req.Len))
				return false
			}
			if !s.tryBudget(p.req.Len) {
				s.give(s.pl.shed(p))
				s.log = append(s.log, fmt.Sprintf("READ off=%d len=%d direct (no budget for its request)", r.Off, r.Len))
				s.gets++
				s.bytes += r.Len
				s.needed += r.Len
				return true
			}
			s.pl.start(p, false)
			s.get(p, "demand")
			s.complete(p)
		default:
			s.log = append(s.log, fmt.Sprintf("READ off=%d len=%d direct (%s)", r.Off, r.Len, found))
			s.gets++
			s.bytes += r.Len
			s.needed += r.Len
			return true
		}
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)) && b.Len() < 4000; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}
