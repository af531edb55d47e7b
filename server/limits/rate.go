package limits

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate limits how often each key may start a call: a token bucket per key
// (golang.org/x/time/rate) refilling at perSecond, holding at most burst.
type Rate struct {
	what      string
	perSecond float64
	burst     int
	refill    time.Duration // time for an empty bucket to fill: then a key may be forgotten
	now       func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time // last call, allowed or not
}

// NewRate returns a limit of perSecond calls per key, with bursts of up to
// burst calls (burst < 1 is taken as 1); what names the call for error
// messages ("GetFlightInfo calls"). perSecond <= 0 means no limit.
func NewRate(what string, perSecond float64, burst int) *Rate {
	if burst < 1 {
		burst = 1
	}
	r := &Rate{what: what, perSecond: perSecond, burst: burst, now: time.Now, buckets: make(map[string]*bucket)}
	if perSecond > 0 {
		r.refill = time.Duration(float64(burst) / perSecond * float64(time.Second))
	}
	return r
}

// Allow spends one call of key's budget, or returns an *ExceededError
// (wrapping ErrExceeded) if the budget is empty. It never waits.
func (r *Rate) Allow(key string) error {
	if r.perSecond <= 0 {
		return nil
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep(now)
	b := r.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(r.perSecond), r.burst)}
		r.buckets[key] = b
	}
	b.last = now
	if b.lim.AllowN(now, 1) {
		return nil
	}
	return &ExceededError{
		Key: key, Limit: r.what,
		Max:  strconv.FormatFloat(r.perSecond, 'g', -1, 64) + " per second (burst " + strconv.Itoa(r.burst) + ")",
		Hint: "retry after a short pause, or batch the requests",
	}
}

// sweep forgets keys whose bucket has refilled, at most once per refill
// period so a busy server does not walk the map on every call. Callers
// hold r.mu.
func (r *Rate) sweep(now time.Time) {
	if now.Sub(r.lastSweep) < r.refill {
		return
	}
	r.lastSweep = now
	for key, b := range r.buckets {
		if now.Sub(b.last) >= r.refill {
			delete(r.buckets, key)
		}
	}
}

// Keys returns how many keys the limiter keeps state for.
func (r *Rate) Keys() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buckets)
}
