package limits

import (
	"strconv"
	"sync"
)

// Concurrency caps how many units (streams, calls) each key holds at once.
// The zero value is not usable; call NewConcurrency.
type Concurrency struct {
	what string
	max  int

	mu     sync.Mutex
	active map[string]int // keys with at least one unit held; no zero entries
}

// NewConcurrency returns a cap of max units per key; what names the unit
// for error messages ("concurrent streams"). max <= 0 means no limit:
// Acquire always succeeds and keeps no state.
func NewConcurrency(what string, max int) *Concurrency {
	return &Concurrency{what: what, max: max, active: make(map[string]int)}
}

// Acquire takes one unit for key, or returns an *ExceededError (wrapping
// ErrExceeded) if key already holds max. On success the caller must call
// release exactly when the unit ends (typically deferred); release is
// idempotent, so calling it twice frees one unit, not two.
func (c *Concurrency) Acquire(key string) (release func(), err error) {
	if c.max <= 0 {
		return func() {}, nil
	}
	c.mu.Lock()
	n := c.active[key]
	if n >= c.max {
		c.mu.Unlock()
		return nil, &ExceededError{
			Key: key, Limit: c.what, Max: strconv.Itoa(c.max),
			Hint: "wait for one of its open streams to finish, or open fewer at a time",
		}
	}
	c.active[key] = n + 1
	c.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { c.release(key) }) }, nil
}

func (c *Concurrency) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.active[key]; n <= 1 {
		delete(c.active, key)
	} else {
		c.active[key] = n - 1
	}
}

// InUse returns how many units key holds now.
func (c *Concurrency) InUse(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active[key]
}

// Keys returns how many keys hold at least one unit: the state kept.
func (c *Concurrency) Keys() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.active)
}
