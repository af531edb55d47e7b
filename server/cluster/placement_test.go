package cluster

import (
	"fmt"
	"slices"
	"testing"
)

func TestPlace(t *testing.T) {
	k := Key{Path: "trips/2024-01.parquet", FirstGroup: 0}
	three := NewRing("grpc://a:1", "grpc://b:1", "grpc://c:1")
	for name, tc := range map[string]struct {
		ring Ring
		want int
	}{
		"no members":  {Ring{}, 0},
		"one member":  {NewRing("grpc://a:1"), 1},
		"two members": {NewRing("grpc://a:1", "grpc://b:1"), 2},
		"three":       {three, 2},
		"duplicates":  {NewRing("grpc://a:1", "grpc://a:1"), 1},
	} {
		t.Run(name, func(t *testing.T) {
			got := tc.ring.Place(k)
			if len(got) != tc.want {
				t.Fatalf("Place = %q, want %d locations", got, tc.want)
			}
			if len(got) == 2 && got[0] == got[1] {
				t.Errorf("owner and runner-up are both %s", got[0])
			}
		})
	}
	// The order members are given in does not matter.
	a := NewRing("grpc://c:1", "grpc://a:1", "grpc://b:1").Place(k)
	if b := three.Place(k); !slices.Equal(a, b) {
		t.Errorf("order changed placement: %q vs %q", a, b)
	}
	// Place is the head of Rank.
	if r := three.Rank(k, 3); !slices.Equal(r[:2], three.Place(k)) || len(r) != 3 {
		t.Errorf("Rank %q, Place %q", r, three.Place(k))
	}
	if r := three.Rank(k, 10); len(r) != 3 {
		t.Errorf("Rank(10) of 3 members = %q", r)
	}
}

// TestKeyParts checks that both parts of a key, and the member, move the
// score, and that concatenations cannot collide.
func TestKeyParts(t *testing.T) {
	base := score("grpc://a:1", Key{"f", 0})
	for name, s := range map[string]uint64{
		"path":   score("grpc://a:1", Key{"g", 0}),
		"group":  score("grpc://a:1", Key{"f", 1}),
		"member": score("grpc://b:1", Key{"f", 0}),
	} {
		if s == base {
			t.Errorf("changing the %s did not change the score", name)
		}
	}
	if score("ab", Key{"c", 0}) == score("a", Key{"bc", 0}) {
		t.Error("member and path boundaries collide")
	}
}

// TestRemovalMovesOnlyItsKeys checks rendezvous hashing's point: when a
// member leaves, only the keys it owned change owner, and they go to their
// runner-up.
func TestRemovalMovesOnlyItsKeys(t *testing.T) {
	full := NewRing("grpc://a:1", "grpc://b:1", "grpc://c:1", "grpc://d:1")
	less := NewRing("grpc://a:1", "grpc://b:1", "grpc://d:1")
	for i := range 1000 {
		k := Key{Path: fmt.Sprintf("data/part-%04d.parquet", i)}
		before, after := full.Place(k), less.Place(k)
		switch {
		case before[0] != "grpc://c:1" && after[0] != before[0]:
			t.Fatalf("%v: owner %s moved to %s though it stayed", k, before[0], after[0])
		case before[0] == "grpc://c:1" && after[0] != before[1]:
			t.Fatalf("%v: c's key went to %s, not its runner-up %s", k, after[0], before[1])
		}
	}
}

// TestBalance checks the spread of many keys over a few members.
func TestBalance(t *testing.T) {
	ring := NewRing("grpc://10.0.0.1:8815", "grpc://10.0.0.2:8815", "grpc://10.0.0.3:8815")
	const n = 3000
	owned := map[string]int{}
	for i := range n {
		owned[ring.Place(Key{Path: fmt.Sprintf("s3://bucket/events/day=%d/part-0.parquet", i)})[0]]++
	}
	for m, c := range owned {
		if c < n/3*85/100 || c > n/3*115/100 {
			t.Errorf("%s owns %d of %d keys; want about %d", m, c, n, n/3)
		}
	}
}

// TestGoldenOwners pins placement: every replica of every version must
// agree on owners, or caches are split across a rolling upgrade. If this
// fails, the hash or its byte layout changed: that is a breaking change.
func TestGoldenOwners(t *testing.T) {
	ring := NewRing("grpc+tls://10.1.0.4:8815", "grpc+tls://10.1.0.5:8815", "grpc+tls://10.1.0.6:8815")
	golden := []struct {
		key  Key
		want []string
	}{
		{Key{"trips/2024-01.parquet", 0}, []string{"grpc+tls://10.1.0.6:8815", "grpc+tls://10.1.0.5:8815"}},
		{Key{"trips/2024-01.parquet", 4}, []string{"grpc+tls://10.1.0.4:8815", "grpc+tls://10.1.0.5:8815"}},
		{Key{"trips/2024-02.parquet", 0}, []string{"grpc+tls://10.1.0.6:8815", "grpc+tls://10.1.0.4:8815"}},
		{Key{"s3://bucket/events/day=1/part-0.parquet", 0}, []string{"grpc+tls://10.1.0.5:8815", "grpc+tls://10.1.0.4:8815"}},
		{Key{"s3://bucket/events/day=2/part-0.parquet", 0}, []string{"grpc+tls://10.1.0.5:8815", "grpc+tls://10.1.0.4:8815"}},
		{Key{"orc/TestOrcFile.test1.orc", 0}, []string{"grpc+tls://10.1.0.5:8815", "grpc+tls://10.1.0.4:8815"}},
		{Key{"", 0}, []string{"grpc+tls://10.1.0.6:8815", "grpc+tls://10.1.0.5:8815"}},
		{Key{"a", 1 << 20}, []string{"grpc+tls://10.1.0.5:8815", "grpc+tls://10.1.0.4:8815"}},
	}
	for _, g := range golden {
		if got := ring.Place(g.key); !slices.Equal(got, g.want) {
			t.Errorf("Place(%+v) = %q, want %q", g.key, got, g.want)
		}
	}
	// The hash itself, apart from ranking.
	if got := score("grpc://a:1", Key{"f", 0}); got != goldenScore {
		t.Errorf("score = %#x, want %#x", got, uint64(goldenScore))
	}
}

const goldenScore = 0x7764f099ed10146d
