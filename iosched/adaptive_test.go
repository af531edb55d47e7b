package iosched

import (
	"testing"
	"time"
)

func TestLatencyModelLearnsHole(t *testing.T) {
	tests := []struct {
		name      string
		ttfb      time.Duration
		bandwidth float64 // bytes per second
		want      int64
	}{
		// S3 from a nearby instance: 30 ms x 100 MB/s = 3 MB.
		{"object store", 30 * time.Millisecond, 100e6, 3_000_000},
		// Local SSD: 50 us x 2 GB/s = 100 KB.
		{"local disk", 50 * time.Microsecond, 2e9, 100_000},
		// Clamped at both ends.
		{"tiny", time.Microsecond, 1e6, MinHole},
		{"huge", time.Second, 1e9, MaxHole},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m latencyModel
			if m.hole() != defaultHole {
				t.Fatalf("hole before any sample = %d, want the default", m.hole())
			}
			for i := 0; i < 40; i++ {
				n := int64(4096 << (i % 10))
				m.observe(n, tt.ttfb+time.Duration(float64(n)/tt.bandwidth*float64(time.Second)))
			}
			got := m.hole()
			if got < tt.want*9/10 || got > tt.want*11/10 {
				ttfb, bw, _ := m.estimate()
				t.Errorf("hole = %d, want about %d (fitted ttfb %v, bandwidth %.0f)", got, tt.want, ttfb, bw)
			}
		})
	}
}
