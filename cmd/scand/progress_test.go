package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock           { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func lastLine(s string) string           { return s[strings.LastIndex(s, "\r")+1:] }
func redraws(s string) int               { return strings.Count(s, "\r") }
func state(rows, bytes int64, files int) progressState {
	return progressState{rows: rows, bytes: bytes, files: files}
}

func TestRenderProgress(t *testing.T) {
	tests := []struct {
		name        string
		done, total progressState
		elapsed     time.Duration
		want        string
	}{
		{
			name: "start", done: state(0, 0, 0), total: state(100000, 40<<20, 2), elapsed: 0,
			want: "[....................]   0%  0/100,000 rows  0 B/40.0 MiB  files 0/2  0s",
		},
		{
			name: "middle", done: state(45000, 12<<20, 1), total: state(100000, 40<<20, 2), elapsed: 3240 * time.Millisecond,
			want: "[#########...........]  45%  45,000/100,000 rows  12.0 MiB/40.0 MiB  files 1/2  3.2s",
		},
		{
			name: "done", done: state(100000, 41<<20, 2), total: state(100000, 40<<20, 2), elapsed: 65 * time.Second,
			want: "[####################] 100%  100,000/100,000 rows  41.0 MiB/40.0 MiB  files 2/2  1m5s",
		},
		{
			name: "more rows than planned is capped", done: state(12, 0, 1), total: state(10, 0, 1), elapsed: time.Second,
			want: "[####################] 100%  12/10 rows  0 B/0 B  files 1/1  1s",
		},
		{
			name: "no total", done: state(1234567, 0, 0), total: state(0, 0, 0), elapsed: time.Second,
			want: "1,234,567 rows  0 B/0 B  files 0/0  1s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderProgress(tt.done, tt.total, tt.elapsed); got != tt.want {
				t.Errorf("renderProgress =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestProgressThrottlesAndClears(t *testing.T) {
	clk := newFakeClock()
	var out bytes.Buffer
	p := newProgress(&out, clk.now, state(1000, 1<<20, 1), 0, true)

	p.update(state(10, 0, 0)) // first update draws at once
	if redraws(out.String()) != 1 {
		t.Fatalf("first update did not draw: %q", out.String())
	}
	for range 5 { // 5 updates within 50ms: none draws
		clk.add(10 * time.Millisecond)
		p.update(state(20, 0, 0))
	}
	if redraws(out.String()) != 1 {
		t.Fatalf("updates within %v redrew: %q", progressEvery, out.String())
	}
	clk.add(50 * time.Millisecond) // 100ms since the last draw
	p.update(state(500, 0, 0))
	if redraws(out.String()) != 2 || !strings.Contains(lastLine(out.String()), " 50%  500/1,000 rows") {
		t.Fatalf("update after %v: %q", progressEvery, out.String())
	}

	// Ten seconds of updates every millisecond draw about 10 a second.
	before := redraws(out.String())
	for range 10000 {
		clk.add(time.Millisecond)
		p.update(state(600, 0, 0))
	}
	if n := redraws(out.String()) - before; n < 95 || n > 101 {
		t.Errorf("%d redraws in 10s, want about 100", n)
	}

	out.Reset()
	p.finish(state(1000, 1<<20, 1))
	got := out.String()
	final := "[####################] 100%  1,000/1,000 rows  1.0 MiB/1.0 MiB  files 1/1"
	if !strings.HasPrefix(got, "\r"+final) {
		t.Errorf("finish did not draw the final state first: %q", got)
	}
	// Then the line is blanked and the cursor returned to its start.
	blank := "\r" + strings.Repeat(" ", p.width) + "\r"
	if !strings.HasSuffix(got, blank) || strings.HasSuffix(got, "\n") {
		t.Errorf("finish did not clear the line: %q", got)
	}
}

func TestProgressPadsShorterLine(t *testing.T) {
	clk := newFakeClock()
	var out bytes.Buffer
	p := newProgress(&out, clk.now, state(0, 0, 0), 0, false)
	p.update(state(1234567, 0, 0))
	clk.add(time.Second)
	p.update(state(1, 0, 0)) // shorter: the rest of the old line is covered
	lines := strings.Split(out.String(), "\r")
	if len(lines) != 3 || len(lines[2]) != len(lines[1]) {
		t.Errorf("second line not padded to the first: %q", out.String())
	}
}

func TestProgressDelay(t *testing.T) {
	clk := newFakeClock()
	var out bytes.Buffer
	p := newProgress(&out, clk.now, state(10, 0, 1), progressDelay, true)
	clk.add(progressDelay / 2)
	p.update(state(5, 0, 0))
	p.finish(state(10, 0, 1))
	if out.Len() != 0 {
		t.Errorf("a scan shorter than the delay drew %q", out.String())
	}

	p = newProgress(&out, clk.now, state(10, 0, 1), progressDelay, true)
	clk.add(progressDelay)
	p.update(state(5, 0, 0))
	if !strings.Contains(out.String(), " 50%") {
		t.Errorf("no bar after the delay: %q", out.String())
	}
}

func TestProgressKeepsFinalLineWhenNotClearing(t *testing.T) {
	clk := newFakeClock()
	var out bytes.Buffer
	p := newProgress(&out, clk.now, state(3, 10, 1), 0, false)
	clk.add(250 * time.Millisecond)
	p.finish(state(3, 10, 1))
	if want := "\r[####################] 100%  3/3 rows  10 B/10 B  files 1/1  300ms\n"; out.String() != want {
		t.Errorf("finish wrote %q, want %q", out.String(), want)
	}
}

func TestNilProgress(t *testing.T) {
	var p *progress
	p.update(state(1, 1, 1))
	p.finish(state(1, 1, 1))
}

func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := createOutput(t.TempDir() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.abort()
	if isTerminal(f.File) {
		t.Error("a regular file is a terminal")
	}
}
