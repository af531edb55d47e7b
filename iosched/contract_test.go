package iosched_test

import (
	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
)

// The IO scheduler's files are what readers are given: keep them in step
// with the interfaces scanner declares (scanner does not import iosched).
var (
	_ scanner.Source        = (*iosched.File)(nil)
	_ scanner.Prefetcher    = (*iosched.File)(nil)
	_ scanner.MetadataCache = (*iosched.File)(nil)
	_ scanner.Lender        = (*iosched.File)(nil)
	_ scanner.Capable       = (*iosched.File)(nil)
)
