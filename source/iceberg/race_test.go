//go:build race

package iceberg

// raceEnabled skips the tests that measure the heap: the race detector
// grows every allocation (a decoded manifest entry by a quarter), so
// they run without it (scripts/test.sh).
const raceEnabled = true
