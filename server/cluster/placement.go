package cluster

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Key identifies a split for placement: the file as the ticket names it
// (root-relative path or URI) and the split's first row group (ORC:
// stripe). Every replica computes the same Key for the same split.
type Key struct {
	Path       string
	FirstGroup int
}

// Locations is how many locations Place returns at most: the owner, then
// the runner-up, where a client goes when the owner fails.
const Locations = 2

// Ring is a snapshot of the healthy members, by their advertised
// locations. The zero Ring has no members. A Ring is immutable and safe
// for concurrent use.
type Ring struct {
	members []string // sorted, distinct
}

// NewRing returns the ring of members (duplicates are dropped; the order
// given does not matter).
func NewRing(members ...string) Ring {
	m := slices.Clone(members)
	slices.Sort(m)
	return Ring{members: slices.Compact(m)}
}

// Members returns the ring's members, sorted.
func (r Ring) Members() []string { return slices.Clone(r.members) }

// Len is the number of members.
func (r Ring) Len() int { return len(r.members) }

// Place returns where split k should be read: its owner first, then the
// runner-up; one location with one member, none with none.
func (r Ring) Place(k Key) []string { return r.Rank(k, Locations) }

// Rank returns the n members with the highest scores for k, best first
// (all of them when n exceeds the ring). Equal scores, which xxhash64
// makes vanishingly rare, are broken by the member's name so that every
// replica still agrees.
func (r Ring) Rank(k Key, n int) []string {
	type scored struct {
		member string
		score  uint64
	}
	all := make([]scored, len(r.members))
	for i, m := range r.members {
		all[i] = scored{m, score(m, k)}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.member, b.member)
	})
	out := make([]string, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.member)
	}
	return out
}

// score is member's weight for k: XXH64 (seed 0) of
//
//	len(member) member len(path) path firstGroup
//
// with lengths and the group as 8-byte big-endian integers, so that no two
// different (member, key) pairs hash the same bytes. This layout is part
// of every deployment's placement: do not change it (TestGoldenOwners).
func score(member string, k Key) uint64 {
	var n [8]byte
	h := xxhash.New()
	binary.BigEndian.PutUint64(n[:], uint64(len(member)))
	h.Write(n[:])
	h.WriteString(member)
	binary.BigEndian.PutUint64(n[:], uint64(len(k.Path)))
	h.Write(n[:])
	h.WriteString(k.Path)
	binary.BigEndian.PutUint64(n[:], uint64(int64(k.FirstGroup)))
	h.Write(n[:])
	return h.Sum64()
}
