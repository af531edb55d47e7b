package iosched

import (
	"fmt"
	"testing"
)

// FuzzPlanner drives the planner with random steps, each one File could
// take at that point, and checks its accounting after every step: the
// budget held is what the requests hold, ahead and inflight count what
// they should, and once the file is closed and every borrow returned,
// nothing is held.
func FuzzPlanner(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3}, int64(300), uint8(2))
	f.Add([]byte{0, 0, 3, 3, 4, 4, 5, 6, 6, 1, 1, 7, 8, 2}, int64(1000), uint8(1))
	f.Fuzz(func(t *testing.T, ops []byte, budget int64, inflight uint8) {
		r := &plannerRun{lim: limits{window: 350, inflight: int(inflight%4) + 1}, total: max(0, budget%2000)}
		var rs []Range
		for i := range int64(8) {
			rs = append(rs, Range{Off: i * 100, Len: 60}) // gaps of 40
		}
		r.pl.add(Coalesce(rs, 40, 200), 40)
		all := append([]*pending(nil), r.pl.pend...)
		for i := 0; i+1 < len(ops); i += 2 {
			step(r, all[int(ops[i+1])%len(all)], ops[i]%9)
			if err := checkPlanner(r, all); err != nil {
				t.Fatalf("after step %d (op %d): %v\n%s", i/2, ops[i]%9, err, r.state())
			}
		}
		r.give(r.pl.close())
		for _, p := range all {
			for p.lent > 0 {
				r.give(r.pl.returned(p))
			}
		}
		if r.inUse != 0 || r.pl.ahead != 0 {
			t.Fatalf("closed and returned, still %d budget held, %d ahead\n%s", r.inUse, r.pl.ahead, r.state())
		}
	})
}

// step takes one step on p that File could take now; steps that do not
// apply to p's state do nothing.
func step(r *plannerRun, p *pending, op byte) {
	switch op {
	case 0:
		r.pl.readahead(r.lim, r.tryBudget)
	case 1, 2: // a fetch ends (2: with its gaps dropped)
		if p.state == fetching {
			r.inUse -= r.pl.fetched(p, op == 2 && dropsGaps(p.req, 0.1))
		}
	case 3:
		if p.state == fetching {
			r.give(r.pl.failed(p))
		}
	case 4, 5: // a read of the first needed range (5: borrowed)
		if _, found := r.pl.lookup(p.req.Off, p.req.Ranges[0].Len); found == foundReady && p.consumed < p.req.Needed {
			if op == 5 {
				r.pl.lend(p)
			}
			r.give(r.pl.consume(p, min(p.req.Ranges[0].Len, p.req.Needed-p.consumed)))
		}
	case 6:
		if p.lent > 0 {
			r.give(r.pl.returned(p))
		}
	case 7:
		if p.state == idle && r.tryBudget(p.req.Len) {
			r.pl.start(p, false)
		}
	case 8:
		r.give(r.pl.shed(p))
	}
}

func checkPlanner(r *plannerRun, all []*pending) error {
	var charged, ahead int64
	inflight := 0
	for _, p := range all {
		charged += p.charged
		switch p.state {
		case idle:
			if p.charged != 0 || p.readahead {
				return fmt.Errorf("idle %d+%d holds %d (readahead %v)", p.req.Off, p.req.Len, p.charged, p.readahead)
			}
		case fetching, ready:
			ahead += p.charged
		case done:
			if p.lent == 0 && p.charged != 0 {
				return fmt.Errorf("done %d+%d, not lent, holds %d", p.req.Off, p.req.Len, p.charged)
			}
		}
		if p.readahead {
			inflight++
		}
	}
	switch {
	case charged != r.inUse:
		return fmt.Errorf("requests hold %d, budget in use %d", charged, r.inUse)
	case r.inUse > r.total:
		return fmt.Errorf("budget in use %d over %d", r.inUse, r.total)
	case ahead != r.pl.ahead:
		return fmt.Errorf("ahead %d, requests not done hold %d", r.pl.ahead, ahead)
	case inflight != r.pl.inflight || inflight > r.lim.inflight:
		return fmt.Errorf("inflight %d, readahead fetches %d, limit %d", r.pl.inflight, inflight, r.lim.inflight)
	}
	return nil
}
