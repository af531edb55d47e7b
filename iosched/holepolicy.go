package iosched

import "github.com/scand/scand/storage"

// The hole policy: how large a gap between two planned ranges is read
// through to save a request, by the kind of store the object declares
// (storage.Capabilities) and by how selective the plan is. It is pure
// (no locks, no IO), so holepolicy_test.go pins it by table.
//
//   - Local files (Capabilities.Local: pread, mmap) have no round trip
//     worth a MiB: a gap read through costs memory bandwidth, page faults
//     and budget for nothing, so only ranges adjacent or nearly so are
//     merged (LocalHole), whatever the latency model learned (it fits
//     pread's microseconds with noise, and its clamp to MaxHole then read
//     through whole column chunks).
//   - Remote stores read through the learned TTFB x bandwidth: a gap
//     costs gap/bandwidth to read and a round trip to skip.
//   - A selective plan on a remote store (the page index kept a few pages
//     of each column, or a limit keeps the first rows) caps that: its
//     ranges are small and far apart, so the requests saved are few while
//     the gap bytes are most of what a merged request would carry, and
//     the requests it leaves run in parallel, sharing their round trips.
//     With k requests in flight, skipping a gap costs about 1/k of a
//     round trip, so the break-even gap is TTFB x bandwidth / k, clamped
//     to [MinHole, MaxSelectiveHole].

// LocalHole is the largest gap merged across on a local file: pages a
// few headers or a small chunk apart are read in one call, nothing more.
const LocalHole = 32 << 10

// MaxSelectiveHole bounds the read-through of a selective plan on a
// remote store.
const MaxSelectiveHole = 1 << 20

// holePolicy is what decides one plan's hole.
type holePolicy struct {
	caps      storage.Capabilities // what the object declares
	learned   int64                // the store's TTFB x bandwidth (or the default before it is learned)
	parallel  int                  // storage requests in flight at once (Options.Concurrency)
	selective bool                 // the plan reads a small part of what it spans (page-pruned, limit)
}

// hole returns the gap below which the plan's ranges are merged.
func (p holePolicy) hole() int64 {
	switch {
	case p.caps.Local:
		return LocalHole
	case !p.selective:
		return p.learned
	}
	k := int64(max(p.parallel, 1))
	return min(MaxSelectiveHole, p.learned, max(MinHole, p.learned/k))
}
