package iosched

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite iosched/testdata's expected outputs")

// The planner tests are scripts in the style of pebble's readahead tests
// (objstorageprovider/testdata/readahead): testdata/planner/* holds
// blocks of a command, a line "----" and the output it must print; the
// output of each step is what it returned and the planner's state after
// it. go test -run TestPlanner -update rewrites the outputs (review the
// diff).
//
// Commands (offsets and lengths are bytes, a range is off+len, and a
// request is named by its offset):
//
//	new window=W inflight=N budget=B   a fresh planner, and a budget of B bytes
//	plan hole=H [max=M] r...           Coalesce the ranges and add the requests
//	readahead                          what readahead starts
//	demand off                         a read starts a demand fetch (budget taken)
//	fetched off [drop]                 its fetch succeeded (drop: gaps dropped)
//	failed off                         its fetch failed
//	lookup off+len                     what a read of the range finds
//	consume off n                      n bytes of it were handed to the decoder
//	lend off / return off              a borrow of it starts, ends
//	shed off                           drop unread readahead but this one
//	close                              the file closes
func TestPlanner(t *testing.T) {
	paths, err := filepath.Glob("testdata/planner/*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) { runScript(t, path) })
	}
}

// plannerRun is a planner with the budget a File would pass it.
type plannerRun struct {
	pl           planner
	lim          limits
	total, inUse int64
	known        map[int64]*pending // every request planned, by offset, also after close
}

func (r *plannerRun) tryBudget(n int64) bool {
	if r.inUse+n > r.total {
		return false
	}
	r.inUse += n
	return true
}

func (r *plannerRun) give(fr freed) string {
	r.inUse -= fr.budget
	var offs []string
	for _, p := range fr.bufs {
		offs = append(offs, strconv.FormatInt(p.req.Off, 10))
	}
	return fmt.Sprintf("freed budget=%d bufs=[%s]", fr.budget, strings.Join(offs, " "))
}

func (r *plannerRun) state() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ahead=%d inflight=%d budget=%d/%d planned=%d wasted=%d", r.pl.ahead, r.pl.inflight, r.inUse, r.total, r.pl.planned, r.pl.wasted)
	for _, p := range r.pl.pend {
		fmt.Fprintf(&b, "\n  %d+%d need=%d %s charged=%d consumed=%d", p.req.Off, p.req.Len, p.req.Needed, p.state, p.charged, p.consumed)
		if p.lent > 0 {
			fmt.Fprintf(&b, " lent=%d", p.lent)
		}
		if p.readahead {
			b.WriteString(" readahead")
		}
		if p.gapsDropped {
			b.WriteString(" gaps-dropped")
		}
	}
	return b.String()
}

// request returns the planned request at off.
func (r *plannerRun) request(t *testing.T, arg string) *pending {
	t.Helper()
	p, ok := r.known[num(t, arg)]
	if !ok {
		t.Fatalf("no request at %s", arg)
	}
	return p
}

func (r *plannerRun) do(t *testing.T, cmd string, args []string, kv map[string]int64) string {
	t.Helper()
	switch cmd {
	case "new":
		*r = plannerRun{lim: limits{window: kv["window"], inflight: int(kv["inflight"])}, total: kv["budget"], known: map[int64]*pending{}}
		return r.state()
	case "plan":
		r.plan(t, args, kv)
		return r.state()
	case "readahead":
		var offs []string
		for _, p := range r.pl.readahead(r.lim, r.tryBudget) {
			offs = append(offs, strconv.FormatInt(p.req.Off, 10))
		}
		return fmt.Sprintf("start [%s]\n%s", strings.Join(offs, " "), r.state())
	case "demand":
		p := r.request(t, args[0])
		if !r.tryBudget(p.req.Len) {
			return "no budget\n" + r.state()
		}
		r.pl.start(p, false)
		return r.state()
	case "fetched":
		rel := r.pl.fetched(r.request(t, args[0]), len(args) > 1 && args[1] == "drop")
		r.inUse -= rel
		return fmt.Sprintf("release %d\n%s", rel, r.state())
	case "failed":
		return r.give(r.pl.failed(r.request(t, args[0]))) + "\n" + r.state()
	case "lookup":
		rg := rangeArg(t, args[0])
		p, found := r.pl.lookup(rg.Off, rg.Len)
		if p == nil {
			return found.String()
		}
		return fmt.Sprintf("%s in %d+%d", found, p.req.Off, p.req.Len)
	case "consume":
		return r.give(r.pl.consume(r.request(t, args[0]), num(t, args[1]))) + "\n" + r.state()
	case "lend":
		r.pl.lend(r.request(t, args[0]))
		return r.state()
	case "return":
		return r.give(r.pl.returned(r.request(t, args[0]))) + "\n" + r.state()
	case "shed":
		return r.give(r.pl.shed(r.request(t, args[0]))) + "\n" + r.state()
	case "close":
		return r.give(r.pl.close()) + "\n" + r.state()
	}
	t.Fatalf("unknown command %q", cmd)
	return ""
}

// plan coalesces the ranges in args (hole=, max=) and plans them.
func (r *plannerRun) plan(t *testing.T, args []string, kv map[string]int64) {
	t.Helper()
	var rs []Range
	for _, a := range args {
		rs = append(rs, rangeArg(t, a))
	}
	maxReq, ok := kv["max"]
	if !ok {
		maxReq = 1 << 40
	}
	r.pl.add(Coalesce(rs, kv["hole"], maxReq), kv["hole"])
	for _, p := range r.pl.pend {
		if r.known[p.req.Off] == nil {
			r.known[p.req.Off] = p
		}
	}
}

func num(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func rangeArg(t *testing.T, s string) Range {
	t.Helper()
	off, n, ok := strings.Cut(s, "+")
	if !ok {
		t.Fatalf("range %q is not off+len", s)
	}
	return Range{Off: num(t, off), Len: num(t, n)}
}

// runScript runs one script, and checks or (-update) rewrites its outputs.
func runScript(t *testing.T, path string) {
	blocks := readScript(t, path)
	var r plannerRun
	var out strings.Builder
	for i, b := range blocks {
		fields := strings.Fields(b.cmd)
		kv := map[string]int64{}
		var args []string
		for _, f := range fields[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = num(t, v)
			} else {
				args = append(args, f)
			}
		}
		got := r.do(t, fields[0], args, kv)
		if !*update && got != b.want {
			t.Errorf("%s, step %d: %s\ngot:\n%s\nwant:\n%s", path, i+1, b.cmd, got, b.want)
		}
		fmt.Fprintf(&out, "%s%s\n----\n%s\n\n", b.comment, b.cmd, got)
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.TrimSuffix(out.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type block struct{ comment, cmd, want string }

// readScript parses blocks: comment lines (#), a command, "----", and
// the expected output up to a blank line.
func readScript(t *testing.T, path string) []block {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	var cur block
	var want []string
	inWant := false
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	flush := func() {
		if cur.cmd != "" {
			cur.want = strings.Join(want, "\n")
			blocks = append(blocks, cur)
		}
		cur, want, inWant = block{}, nil, false
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inWant && line == "":
			flush()
		case inWant:
			want = append(want, line)
		case strings.HasPrefix(line, "#"):
			cur.comment += line + "\n"
		case line == "----":
			inWant = true
		case line != "":
			cur.cmd = line
		}
	}
	flush()
	return blocks
}
