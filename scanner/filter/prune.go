package filter

// MayMatch says, from a group's statistics alone, whether the group can
// hold a row where the predicate is true. It answers true whenever it
// cannot be sure (missing statistics, NaN, unknown counts): it must never
// drop a group that holds a matching row.
func (p *Predicate) MayMatch(stats StatsSource) bool {
	return true
}
