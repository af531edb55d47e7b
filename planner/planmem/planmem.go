// Package planmem bounds the memory that planning holds: the footers
// GetFlightInfo and GetSchema decode, the per-file state a plan keeps
// until it answers, and the bloom filters it reads to prune.
//
// The admission controller (package admission) bounds what DoGet streams
// decode; planning is charged apart, to its own share of --io-memory, so
// that plans never queue behind streams nor streams behind plans, and a
// flood of plans (forty GetFlightInfo calls over 10,000 files each, or
// footers declaring 100,000 columns) waits or is refused instead of
// growing the process past --io-memory.
//
// # Charges
//
// A Plan is one planning call's account. Each file it opens gets a File
// charge: the footer reader reserves what the decoded footer will take
// before decoding it (scanner.WithMetadataBudget), and once the file is
// described the plan keeps the part its state still needs (Keep) until
// End, giving back the rest. Reserve waits while other plans hold the
// share, and fails at once with an error wrapping ErrOverBudget
// (RESOURCE_EXHAUSTED at the server's edge) when n is more than the
// whole share.
//
// # Deadlock
//
// Plans keep memory while they wait for more, so a share filled by the
// kept state of plans that all wait would never drain. Two rules keep
// that rare and bounded. A plan prepays what it expects to keep (Prepay:
// its files at a minimum each) before it holds anything, so plans wait
// whole for room rather than each taking a little. And when a waiter
// finds no charge that will be given back (no footer being decoded, no
// plan holding memory without waiting), the youngest waiting plan that
// holds a sixteenth of the share or more fails with RESOURCE_EXHAUSTED
// (small plans only when no large one is left), and what it kept lets
// the older ones go on; a plan that holds nothing yet (waiting to
// prepay) just waits, and gets in as soon as anything is given back.
//
// A nil *Budget is valid and charges nothing; so are the nil *Plan and
// nil *File it hands out. Everything here is safe for concurrent use.
package planmem

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrOverBudget is wrapped by every refusal of planning memory: the
// charge is larger than the whole share, or the plan was the youngest of
// a deadlock. The server maps it to RESOURCE_EXHAUSTED at its edge.
var ErrOverBudget = errors.New("planning memory exhausted")

// Budget is the planning share of memory.
type Budget struct {
	capacity int64
	flag     string // how the operator sets it, for messages

	mu      sync.Mutex
	used    int64 // kept and in flight, over all plans
	plans   map[*Plan]struct{}
	changed chan struct{} // closed and replaced when a waiter may proceed
	peak    int64
	seq     uint64
}

// New returns a share of capacity bytes; flag names the setting in error
// messages ("--io-plan-memory"). capacity <= 0 means no bound: nil.
func New(capacity int64, flag string) *Budget {
	if capacity <= 0 {
		return nil
	}
	return &Budget{capacity: capacity, flag: flag, plans: map[*Plan]struct{}{}, changed: make(chan struct{})}
}

// Stats are the share's figures.
type Stats struct {
	Capacity, Used, Peak int64
	Plans                int // plans begun and not ended
}

// Stats returns the share's figures now.
func (b *Budget) Stats() Stats {
	if b == nil {
		return Stats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Capacity: b.capacity, Used: b.used, Peak: b.peak, Plans: len(b.plans)}
}

// Plan is one planning call's account.
type Plan struct {
	b   *Budget
	seq uint64 // order of Begin: the youngest plan is refused first
	// Under b.mu:
	prepaid  int64 // reserved up front (Prepay) and not yet kept
	kept     int64 // kept until End
	inFlight int64 // reserved by files not yet described
	waiting  int   // Reserve calls waiting
	ended    bool
	refused  bool // chosen to fail, so that the others go on
}

// Begin opens a plan's account; End closes it.
func (b *Budget) Begin() *Plan {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	b.seq++
	p := &Plan{b: b, seq: b.seq}
	b.plans[p] = struct{}{}
	b.mu.Unlock()
	return p
}

// End gives back everything the plan kept or has in flight.
func (p *Plan) End() {
	if p == nil {
		return
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	b.used -= p.prepaid + p.kept + p.inFlight
	p.prepaid, p.kept, p.inFlight = 0, 0, 0
	delete(b.plans, p)
	b.wakeLocked()
}

func (b *Budget) wakeLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// progressLocked reports whether some charge will be given back without
// waiting for memory: a footer in flight, a plan holding memory that does
// not wait, or one chosen to fail.
func (b *Budget) progressLocked() bool {
	for q := range b.plans {
		if q.refused {
			if q.prepaid+q.kept+q.inFlight > 0 {
				return true // it will end, and give its memory back
			}
			continue
		}
		if q.inFlight > 0 || (q.prepaid+q.kept > 0 && q.waiting == 0) {
			return true
		}
	}
	return false
}

// reserve charges n to p, in flight (or prepaid), waiting while the
// share is used.
func (p *Plan) reserve(ctx context.Context, n int64, what string, prepay bool) error {
	b := p.b
	if n > b.capacity {
		return fmt.Errorf("planning memory: %s needs %d MiB, more than the whole planning share of %d MiB (%s): %w",
			what, mib(n), mib(b.capacity), b.flag, ErrOverBudget)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	waiting := false
	defer func() {
		if waiting {
			p.waiting--
		}
	}()
	for {
		if p.ended {
			return fmt.Errorf("planning memory: the plan has ended: %w", context.Canceled)
		}
		if p.refused {
			if len(b.plans) == 1 {
				return fmt.Errorf("planning memory: this plan alone keeps %d MiB of the planning share of %d MiB (%s) and needs more: "+
					"scan fewer files at once, or raise %s: %w", mib(p.prepaid+p.kept+p.inFlight), mib(b.capacity), b.flag, b.flag, ErrOverBudget)
			}
			return fmt.Errorf("planning memory: the planning share of %d MiB (%s) is held by plans that all wait for more, "+
				"and this is the youngest: retry, or plan fewer or narrower files at once: %w", mib(b.capacity), b.flag, ErrOverBudget)
		}
		if b.used+n <= b.capacity {
			b.used += n
			b.peak = max(b.peak, b.used)
			if prepay {
				p.prepaid += n
			} else {
				p.inFlight += n
			}
			return nil
		}
		if !waiting {
			// The plan counts as waiting for the whole call, so that
			// re-checks after a wake do not wake the others again.
			waiting = true
			if p.waiting++; p.waiting == 1 && p.inFlight == 0 {
				b.wakeLocked() // the others may now find that nothing progresses
			}
		}
		if !b.progressLocked() {
			// Nothing will be given back unless a plan fails: the
			// youngest waiting one that holds memory, which has done
			// the least (failing one that holds nothing would free
			// nothing; it waits).
			if y := b.youngestHolderWaitingLocked(); y != nil {
				y.refused = true
				b.wakeLocked()
				continue
			}
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
			b.mu.Lock()
		case <-ctx.Done():
			b.mu.Lock()
			return ctx.Err()
		}
	}
}

// youngestHolderWaitingLocked is the plan to fail when nothing
// progresses: the last begun of those that wait for memory and hold a
// sixteenth of the share or more, else the last begun of those that hold
// any. Small plans (a scan of a few files beside a flood of large ones)
// are thus the last to fail.
func (b *Budget) youngestHolderWaitingLocked() *Plan {
	var big, any *Plan
	for q := range b.plans {
		held := q.prepaid + q.kept + q.inFlight
		if q.waiting == 0 || q.refused || held == 0 {
			continue
		}
		if any == nil || q.seq > any.seq {
			any = q
		}
		if held >= b.capacity/16 && (big == nil || q.seq > big.seq) {
			big = q
		}
	}
	if big != nil {
		return big
	}
	return any
}

// Prepay reserves n for the plan up front, before it holds anything: the
// state it expects to keep (its files, at a minimum each). What its
// files keep comes out of it first. It waits while the share is used,
// and fails at once when n is more than the whole share.
func (p *Plan) Prepay(ctx context.Context, n int64, what string) error {
	if p == nil || n <= 0 {
		return nil
	}
	return p.reserve(ctx, n, what, true)
}

// release gives back n of p's in-flight charge, keeping keep of it.
func (p *Plan) release(n, keep int64) {
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.ended {
		return
	}
	keep = min(keep, n)
	cover := min(keep, p.prepaid) // kept out of what was prepaid
	p.prepaid -= cover
	p.inFlight -= n
	p.kept += keep
	b.used -= n - (keep - cover)
	b.wakeLocked()
}

// File is the charge of one file a plan opens: a scanner.Reserver for its
// footer reader. Its reservations are in flight until Keep.
type File struct {
	p  *Plan
	mu sync.Mutex
	n  int64 // reserved and not yet kept or released
}

// File opens a file's charge in p.
func (p *Plan) File() *File {
	if p == nil {
		return nil
	}
	return &File{p: p}
}

// Reserve implements scanner.Reserver: it charges n more to the plan,
// waiting while other plans hold the share.
func (f *File) Reserve(ctx context.Context, n int64) error {
	if f == nil || n <= 0 {
		return nil
	}
	if err := f.p.reserve(ctx, n, "a file's metadata", false); err != nil {
		return err
	}
	f.mu.Lock()
	f.n += n
	f.mu.Unlock()
	return nil
}

// Release implements scanner.Reserver.
func (f *File) Release(n int64) {
	if f == nil || n <= 0 {
		return
	}
	f.mu.Lock()
	n = min(n, f.n)
	f.n -= n
	f.mu.Unlock()
	f.p.release(n, 0)
}

// Keep ends the file's charge: up to keep bytes of what it reserved stay
// charged to the plan until End (the state the plan keeps of the file),
// the rest is given back. It never waits.
func (f *File) Keep(keep int64) {
	if f == nil {
		return
	}
	f.mu.Lock()
	n := f.n
	f.n = 0
	f.mu.Unlock()
	f.p.release(n, max(keep, 0))
}

// Reserver is a scanner.Reserver over the plan for reads that may be
// skipped (bloom filters): Reserve never waits, and fails when the share
// has no room now.
func (p *Plan) Reserver() *Skippable {
	if p == nil {
		return nil
	}
	return &Skippable{p: p}
}

// Skippable charges a plan what fits at once.
type Skippable struct{ p *Plan }

// Reserve implements scanner.Reserver without waiting.
func (s *Skippable) Reserve(_ context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	b := s.p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.p.ended || b.used+n > b.capacity {
		return fmt.Errorf("planning memory: %d MiB of %d MiB (%s) in use: %w", mib(b.used), mib(b.capacity), b.flag, ErrOverBudget)
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	s.p.inFlight += n
	return nil
}

// Release implements scanner.Reserver.
func (s *Skippable) Release(n int64) {
	if n > 0 {
		s.p.release(n, 0)
	}
}

func mib(n int64) int64 { return (n + 1<<20 - 1) >> 20 }
