package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// --progress values.
const (
	progressAuto = "auto"
	progressOn   = "on"
	progressOff  = "off"
)

const (
	// progressEvery is the least time between two redraws (10 a second).
	progressEvery = 100 * time.Millisecond
	// progressDelay is how long a scan runs before --progress auto draws
	// the bar, so that short scans print nothing extra.
	progressDelay = time.Second
	// progressBarWidth is the number of cells of the bar.
	progressBarWidth = 20
)

// progressState is how far a scan is, or its total.
type progressState struct {
	rows, bytes int64
	files       int
}

// progress draws a one-line progress bar on a terminal: each redraw
// returns to the start of the line with "\r" and overwrites it. A nil
// *progress draws nothing.
type progress struct {
	w     io.Writer
	now   func() time.Time
	total progressState
	delay time.Duration // no drawing before start+delay
	// clear erases the line at the end (a terminal); otherwise the final
	// line stays, ended by a newline.
	clear bool

	start, last time.Time
	width       int // runes of the line on screen
	drawn       bool
}

func newProgress(w io.Writer, now func() time.Time, total progressState, delay time.Duration, clear bool) *progress {
	t := now()
	return &progress{w: w, now: now, total: total, delay: delay, clear: clear, start: t}
}

// update redraws the bar with done, at most every progressEvery and not
// before the delay has passed.
func (p *progress) update(done progressState) {
	if p == nil {
		return
	}
	t := p.now()
	if t.Sub(p.start) < p.delay || (p.drawn && t.Sub(p.last) < progressEvery) {
		return
	}
	p.draw(done, t)
}

// finish draws the final state and then erases the line (clear) or ends
// it with a newline. A bar that was never drawn because the scan ended
// within the delay stays undrawn.
func (p *progress) finish(done progressState) {
	if p == nil || (!p.drawn && p.delay > 0) {
		return
	}
	p.draw(done, p.now())
	if p.clear {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	} else {
		fmt.Fprintln(p.w)
	}
	p.drawn = false
}

func (p *progress) draw(done progressState, t time.Time) {
	line := renderProgress(done, p.total, t.Sub(p.start))
	n := utf8.RuneCountInString(line)
	pad := ""
	if n < p.width {
		pad = strings.Repeat(" ", p.width-n) // cover the longer line before
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.width = max(n, p.width)
	p.last = t
	p.drawn = true
}

// renderProgress formats one line of the bar:
//
//	[#########...........]  45%  45,000/100,000 rows  12.0 MiB/40.0 MiB  files 1/2  3.2s
//
// The fraction is of rows. Bytes done are what the server fetched for the
// endpoints finished so far; the total is the plan's compressed bytes, so
// the two may differ a little at the end.
func renderProgress(done, total progressState, elapsed time.Duration) string {
	var b strings.Builder
	if total.rows > 0 {
		frac := min(float64(done.rows)/float64(total.rows), 1)
		filled := int(frac * progressBarWidth)
		fmt.Fprintf(&b, "[%s%s] %3d%%  ", strings.Repeat("#", filled), strings.Repeat(".", progressBarWidth-filled), int(frac*100))
		fmt.Fprintf(&b, "%s/%s rows", thousands(done.rows), thousands(total.rows))
	} else {
		fmt.Fprintf(&b, "%s rows", thousands(done.rows))
	}
	fmt.Fprintf(&b, "  %s/%s", formatBytes(done.bytes), formatBytes(total.bytes))
	fmt.Fprintf(&b, "  files %d/%d", done.files, total.files)
	fmt.Fprintf(&b, "  %s", elapsed.Round(100*time.Millisecond))
	return b.String()
}

// thousands prints n with thousands separators: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return sign + b.String()
}

// isTerminal reports whether w is a terminal (a character device). It
// needs no terminal library; /dev/null also counts, which is harmless for
// a progress bar.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
