package server

import (
	"context"
	"path"
	"strings"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
)

// columnarExt are the file name extensions ListFlights lists without
// reading the file: the names Parquet and ORC writers give (pyarrow,
// Spark, Hive, DuckDB, arrow-go).
var columnarExt = map[string]bool{".parquet": true, ".parq": true, ".pq": true, ".orc": true}

// scannable reports whether ListFlights lists the file: a Parquet or ORC
// extension, or, for a name without an extension (Hive's and Spark's
// "part-00000"), Parquet or ORC magic bytes. Other extensions (.csv,
// .json, .crc, ...) are left out unread, so listing a folder of them
// costs no storage reads; the magic check goes through the IO scheduler,
// whose metadata cache keeps the answer for the scans that follow.
func (s *Server) scannable(ctx context.Context, info storage.Info) (bool, error) {
	ext := strings.ToLower(path.Ext(path.Base(info.Name)))
	if ext != "" {
		return columnarExt[ext], nil
	}
	f, err := s.sched.Open(ctx, info)
	if err != nil {
		// Gone since it was listed, or unreadable: not listed, as
		// below; only the caller's cancellation ends the listing.
		return false, ctx.Err()
	}
	defer f.Close()
	if !s.callerOf(ctx).AllowsFile(f.Info()) {
		return false, nil // a link swapped since it was listed
	}
	format, err := scanner.Detect(f)
	if err != nil && ctx.Err() != nil {
		return false, ctx.Err()
	}
	// A file that is not columnar, or unreadable, is not listed: a scan of
	// it would fail, which is what leaving it out says.
	return err == nil && format != scanner.FormatUnknown, nil
}
