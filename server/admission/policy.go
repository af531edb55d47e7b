package admission

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// The policy: pure functions over what the controller holds, so that
// tables can test every rule apart from the goroutines and timers.
//
//   - Lanes. The small share (Options.SmallShare, 1/8 of the capacity by
//     default) is for streams that ask for at most Options.SmallStream
//     (1/4 of it): a 10-row scan never queues behind multi-MiB streams,
//     whatever they do. Other streams share the rest, and a stream larger
//     than that runs alone rather than never.
//   - Order. Waiters are served in arrival order, except that a waiter
//     whose identity and client address stay within their fair share
//     (the share divided by the identities, and by the addresses, that
//     hold or wait for memory) goes before one whose owner would exceed
//     it: one client opening a hundred streams does not keep another's
//     one waiting.
//   - Cuts. When the waiter to serve next does not fit, or when scans wait
//     in vain for memory held outside the share (Relieve: the IO
//     scheduler's prefetch buffers that a stalled stream's messages point
//     into), streams blocked on their clients for Options.CutAfter (for
//     Relieve, StuckAfter) are ended, in the order victims gives (owners over their fair share
//     first, then the largest holders, then the longest blocked), until
//     the bytes asked for would come back.

// Who is whom a stream runs for: the owners whose fair share it counts
// against. The zero value is one anonymous owner.
type Who struct {
	Identity string // the authenticated identity; "" when there is none
	Peer     string // the client's address without its port
}

// claim is a waiter as the policy sees it.
type claim struct {
	n   int64
	who Who
}

// holding is an admitted stream as the policy sees it.
type holding struct {
	n       int64 // decode memory
	other   int64 // memory held outside the share (Grant.HoldsAlso)
	who     Who
	blocked time.Duration // on its client, so far; 0 while it works
	cut     bool          // already being ended
}

// usage is the bytes held by each identity and each client address, and
// how many of each hold or wait for memory.
type usage struct {
	byIdentity, byPeer map[string]int64
	identities, peers  int
}

// usageOf sums holders' bytes by owner and counts the owners of holders
// and waiters.
func usageOf(hs []holding, ws []claim) usage {
	u := usage{byIdentity: map[string]int64{}, byPeer: map[string]int64{}}
	for _, h := range hs {
		u.byIdentity[h.who.Identity] += h.n
		u.byPeer[h.who.Peer] += h.n
	}
	for _, w := range ws {
		if _, ok := u.byIdentity[w.who.Identity]; !ok {
			u.byIdentity[w.who.Identity] = 0
		}
		if _, ok := u.byPeer[w.who.Peer]; !ok {
			u.byPeer[w.who.Peer] = 0
		}
	}
	u.identities, u.peers = len(u.byIdentity), len(u.byPeer)
	return u
}

// excess is how far past its fair share of capacity the larger of its
// identity's and its address's holdings would be with n more bytes; <= 0
// is within both. A dimension with one owner has no share to exceed: it
// holds or waits alone, and whether it fits is the capacity's business.
func (u usage) excess(who Who, n, capacity int64) int64 {
	e := int64(math.MinInt64)
	if u.identities > 1 {
		e = u.byIdentity[who.Identity] + n - capacity/int64(u.identities)
	}
	if u.peers > 1 {
		e = max(e, u.byPeer[who.Peer]+n-capacity/int64(u.peers))
	}
	return e
}

// next is the index of the waiter to serve first: the earliest whose
// owners stay within their fair share, or, when every one would exceed
// it, the one that would exceed it least (the earliest of those). -1
// when ws is empty.
func next(ws []claim, u usage, capacity int64) int {
	best, bestExcess := -1, int64(0)
	for i, w := range ws {
		e := max(0, u.excess(w.who, w.n, capacity))
		if best < 0 || e < bestExcess {
			best, bestExcess = i, e
		}
		if e == 0 {
			break
		}
	}
	return best
}

// victims picks the holders to end so that need bytes come back, as
// counted by freed: those blocked for cutAfter or more and not already
// being ended, owners over their fair share first (most over first), then
// those holding the most (decode memory and other), then the longest
// blocked. It takes them until what they free reaches need, or all the
// candidates when that does not.
func victims(hs []holding, need int64, cutAfter time.Duration, u usage, capacity int64, freed func(holding) int64) []int {
	if need <= 0 {
		return nil
	}
	var cands []int
	for i, h := range hs {
		if !h.cut && h.blocked > 0 && h.blocked >= cutAfter {
			cands = append(cands, i)
		}
	}
	over := func(h holding) int64 { return max(0, u.excess(h.who, 0, capacity)) }
	slices.SortStableFunc(cands, func(a, b int) int {
		ha, hb := hs[a], hs[b]
		return cmp.Or(cmp.Compare(over(hb), over(ha)), cmp.Compare(hb.n+hb.other, ha.n+ha.other), cmp.Compare(hb.blocked, ha.blocked))
	})
	var sum int64
	for k, i := range cands {
		if sum >= need {
			return cands[:k]
		}
		sum += freed(hs[i])
	}
	return cands
}

func decodeBytes(h holding) int64 { return h.n }
func otherBytes(h holding) int64  { return h.other }
