package client

import (
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// Groups a bloom filter drops are not kept: the kept count takes both
// prunings off.
func TestRowGroupsKeptCountsBloomPruning(t *testing.T) {
	s := planStatsOf(&scandv1.PlanStats{RowGroups: 20, RowGroupsPruned: 12, RowGroupsPrunedByBloom: 7})
	if got := s.RowGroupsKept(); got != 1 {
		t.Fatalf("RowGroupsKept = %d, want 1", got)
	}
}
