package filter

// AllMatch says, from a group's statistics alone, whether the predicate is
// true on every row of the group: the set of values MayMatch's abstract
// interpretation finds for the group is {true} alone. Since that set
// holds every value some row can take (and more), a group it answers
// true for has no row where the predicate is false or unknown. It answers
// false whenever it cannot be sure: missing statistics, possible NULLs or
// NaN, bounds that straddle a literal. A count uses it to take a group's
// rows from its row count without reading it.
func (p *Predicate) AllMatch(stats StatsSource) bool {
	if p == nil || p.expr == nil || stats == nil {
		return false
	}
	return mayYield(p.expr, stats) == yTrue
}
