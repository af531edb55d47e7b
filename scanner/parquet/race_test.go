//go:build race

package parquet

// raceEnabled lets the slowest comparisons run a smaller share under the
// race detector, which makes them take minutes; the plain run covers all.
const raceEnabled = true
