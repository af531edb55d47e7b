package storage

// MatchSegments exports matchSegments to the fuzz tests.
var MatchSegments = matchSegments
