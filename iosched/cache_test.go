package iosched

import "testing"

// TestMetaCacheLookups counts hits and misses as the metrics export them.
func TestMetaCacheLookups(t *testing.T) {
	s := &Scheduler{cache: newMetaCache(1 << 20)}
	s.cache.get("a") // miss
	s.cache.put("a", 1, 10)
	s.cache.get("a") // hit
	s.cache.get("a") // hit
	s.cache.get("b") // miss
	if h, m := s.MetaCacheLookups(); h != 2 || m != 2 {
		t.Errorf("MetaCacheLookups = %d hits, %d misses; want 2, 2", h, m)
	}
}
