package iosched

import (
	"sync"
	"time"
)

// Bounds of the adaptive hole size.
const (
	MinHole     = 4 << 10
	MaxHole     = 32 << 20
	defaultHole = 1 << 20 // until enough requests were measured
	samples     = 64
	minSamples  = 8
)

// latencyModel learns a store's time to first byte and bandwidth from the
// requests it serves, fitting duration = ttfb + bytes/bandwidth by least
// squares over the most recent requests. Their product is the gap worth
// reading through instead of paying another round trip. It is safe for
// concurrent use.
type latencyModel struct {
	mu    sync.Mutex
	n     int
	next  int
	bytes [samples]float64
	secs  [samples]float64
}

func (m *latencyModel) observe(bytes int64, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bytes[m.next] = float64(bytes)
	m.secs[m.next] = d.Seconds()
	m.next = (m.next + 1) % samples
	if m.n < samples {
		m.n++
	}
}

// estimate returns the fitted TTFB and bandwidth (bytes/s); ok is false
// until the samples are enough, and varied enough in size, to fit.
func (m *latencyModel) estimate() (ttfb time.Duration, bandwidth float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n < minSamples {
		return 0, 0, false
	}
	var sx, sy, sxx, sxy float64
	n := float64(m.n)
	for i := 0; i < m.n; i++ {
		x, y := m.bytes[i], m.secs[i]
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	den := n*sxx - sx*sx
	if den <= 0 {
		return 0, 0, false
	}
	slope := (n*sxy - sx*sy) / den // seconds per byte
	icept := (sy - slope*sx) / n   // seconds
	if slope <= 0 {
		// Time did not grow with size: bandwidth is beyond what the
		// samples can tell. Treat the mean as pure latency.
		return time.Duration(sy / n * float64(time.Second)), 0, true
	}
	if icept < 0 {
		icept = 0
	}
	return time.Duration(icept * float64(time.Second)), 1 / slope, true
}

// hole is TTFB x bandwidth, clamped to [MinHole, MaxHole].
func (m *latencyModel) hole() int64 {
	ttfb, bw, ok := m.estimate()
	if !ok {
		return defaultHole
	}
	if bw == 0 {
		return MaxHole
	}
	h := int64(ttfb.Seconds() * bw)
	return min(MaxHole, max(MinHole, h))
}
