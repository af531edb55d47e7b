package server

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/iceberg"
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

// listingTables says what ListFlights lists for criteria expr when
// catalogs are configured: files (unless expr starts with a catalog's
// name, which names tables), then the catalogs' tables whose name starts
// with expr (unless expr holds a slash, which names files).
func (s *Server) listingTables(expr string) (files, tables bool) {
	if len(s.cfg.Catalogs) == 0 {
		return true, false
	}
	if _, _, ok := s.cfg.Catalogs.Lookup(expr); ok {
		return false, true
	}
	return true, !strings.ContainsAny(expr, "/\\")
}

// listTables sends a FlightInfo for each catalog table whose name
// (catalog.namespace.table) starts with prefix and whose location lies in
// the caller's scope (others look absent, as files outside it do), in
// catalog name order. Each has a command descriptor, {"table": NAME},
// that GetFlightInfo accepts as it is; no schema and total_records -1, as
// for files: both need the table's metadata, a read per table. n counts
// what the call has listed, files included, against maxFiles. Asking the
// catalogs is bounded by --plan-timeout, as planning is: a catalog that
// stops answering cannot hold the call.
func (s *Server) listTables(ctx context.Context, prefix string, n *int, send func(*flight.FlightInfo) error) error {
	caller := s.callerOf(ctx)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Planning.Timeout)
	defer cancel()
	for _, name := range slices.Sorted(maps.Keys(s.cfg.Catalogs)) {
		if !strings.HasPrefix(name+".", prefix) && !strings.HasPrefix(prefix, name+".") {
			continue
		}
		err := s.cfg.Catalogs[name].Tables(ctx, func(ident []string, metadata string) error {
			full := iceberg.TableName(name, ident)
			if !strings.HasPrefix(full, prefix) {
				return nil
			}
			loc, err := iceberg.CatalogLocation(s.bucket, metadata)
			if err != nil || !caller.scope.Allows(loc) {
				return nil // outside the root or the caller's scope: absent
			}
			if *n++; *n > maxFiles {
				return tooLargef("more than %d files and tables under %q; list a narrower prefix", maxFiles, prefix)
			}
			cmd, err := json.Marshal(struct {
				Table string `json:"table"`
			}{full})
			if err != nil {
				return err
			}
			return send(&flight.FlightInfo{
				FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd},
				TotalRecords:     -1,
				TotalBytes:       -1,
			})
		})
		var se *source.Error
		if errors.As(err, &se) && se.Kind == source.Unavailable && !strings.HasPrefix(prefix+".", name+".") {
			// A listing across catalogs goes on without one that cannot be
			// reached; a listing of that catalog fails.
			s.log.Warn("ListFlights: a catalog cannot be reached; its tables are left out", "catalog", name, "err", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
