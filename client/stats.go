package client

import (
	"fmt"

	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/wire"
)

// Stats are the IO figures of a scan or of one of its streams.
//
// scand sends the figures of each DoGet stream on the stream's last message
// as a scandv1.StreamStats, encoded as JSON application metadata (see
// package wire); a stream's Stats are those figures with Path and Paths
// set. [Scan.Stats] sums the streams with [Stats.Add], which drops Path,
// keeps the files in Paths (each once, in the order read) and counts Files
// and Endpoints. Stats is a Go value, not a wire
// format: the fields' meaning is documented on scandv1.StreamStats.
type Stats struct {
	// Path is the first file a single stream read; empty in a sum.
	Path string
	// Paths are the files a single stream read, in order (several for an
	// endpoint that packs small files); in [Scan.Stats], every file the
	// scan read, once each.
	Paths []string
	// Files is the number of files: those a single stream read, or in
	// [Scan.Stats] the distinct files of all streams.
	Files int
	// Endpoints is the number of streams summed (0 for a single stream).
	Endpoints int

	Rows    int64
	Batches int64
	// RowsRead is the rows the server decoded; RowsFiltered the part of
	// them the scan's filter rejected. Rows is what was sent: RowsRead -
	// RowsFiltered, capped by the limit. Both are 0 from servers older than
	// filters, and RowsFiltered is 0 without a filter.
	RowsRead     int64
	RowsFiltered int64
	// Reads is the number of storage reads (GETs) the server issued.
	Reads int64
	// BytesFetched is what the server read from storage. Every byte of it
	// is one of: BytesUsed, handed to the decoders (once, however often
	// read); BytesWasted, gap bytes read only to merge nearby ranges into
	// fewer requests; BytesUnused, read ahead and never asked for (a small
	// file read whole, ranges a limit left unread). So BytesFetched =
	// BytesUsed + BytesWasted + BytesUnused.
	BytesFetched int64
	BytesUsed    int64
	BytesWasted  int64
	BytesUnused  int64
	// BytesPlanned is what the decoders announced they would need before
	// reading.
	BytesPlanned int64
	// CacheHits counts file metadata served from the server's cache.
	CacheHits int64
	// Hole is the largest gap (bytes) the server read through to merge two
	// ranges. It is a setting, not a count: a sum keeps the largest.
	Hole int64
	// IOSeconds is the time the server spent waiting on storage.
	IOSeconds float64
	// ElapsedSeconds is the server's time for the stream. In a sum it adds
	// up streams that ran in parallel, so it can exceed the wall time.
	ElapsedSeconds float64
	// Failovers counts the times an endpoint moved to another replica
	// (before its first batch, or resumed after some). The IO figures of
	// an endpoint that moved are its last stream's only.
	Failovers int64
	// IndexReads and IndexBytesFetched are the part of Reads and
	// BytesFetched that read the Parquet page index; PagesSkipped counts
	// the data pages it let the server leave unread.
	IndexReads, IndexBytesFetched, PagesSkipped int64
	// LateRowGroups counts the row groups read with late materialization
	// (the filter's columns first; docs/filters.md).
	LateRowGroups int64
	// BytesFromCache is the part of BytesFetched that the server's page
	// cache served instead of storage; Reads counts only storage requests.
	BytesFromCache int64
}

// StatsOf returns the figures one stream reported, as Stats (Files
// and Endpoints zero). Use it with wire.UnmarshalStats to read the
// figures of a stream read with another Flight client.
func StatsOf(st *scandv1.StreamStats) Stats {
	paths := st.GetPaths()
	if len(paths) == 0 && st.GetPath() != "" {
		paths = []string{st.GetPath()} // a server older than paths
	}
	return Stats{
		Path:           st.GetPath(),
		Paths:          paths,
		Files:          len(paths),
		Rows:           st.GetRows(),
		Batches:        st.GetBatches(),
		RowsRead:       st.GetRowsRead(),
		RowsFiltered:   st.GetRowsFiltered(),
		Reads:          st.GetReads(),
		BytesFetched:   st.GetBytesFetched(),
		BytesUsed:      st.GetBytesUsed(),
		BytesPlanned:   st.GetBytesPlanned(),
		BytesWasted:    st.GetBytesWasted(),
		BytesUnused:    st.GetBytesUnused(),
		CacheHits:      st.GetCacheHits(),
		Hole:           st.GetHole(),
		IOSeconds:      st.GetIoSeconds(),
		ElapsedSeconds: st.GetElapsedSeconds(),

		IndexReads:        st.GetIndexReads(),
		IndexBytesFetched: st.GetIndexBytesFetched(),
		PagesSkipped:      st.GetPagesSkipped(),
		LateRowGroups:     st.GetLateRowGroups(),
		BytesFromCache:    st.GetBytesFromCache(),
	}
}

// Add adds o's figures to s (Hole: the larger) and appends o's Paths to
// s's. The sum has no Path.
func (s *Stats) Add(o Stats) {
	s.Path = ""
	s.Paths = append(s.Paths, o.Paths...)
	s.Files += o.Files
	s.Endpoints += o.Endpoints
	s.Rows += o.Rows
	s.Batches += o.Batches
	s.RowsRead += o.RowsRead
	s.RowsFiltered += o.RowsFiltered
	s.Reads += o.Reads
	s.BytesFetched += o.BytesFetched
	s.BytesUsed += o.BytesUsed
	s.BytesPlanned += o.BytesPlanned
	s.BytesWasted += o.BytesWasted
	s.BytesUnused += o.BytesUnused
	s.CacheHits += o.CacheHits
	s.Hole = max(s.Hole, o.Hole)
	s.IOSeconds += o.IOSeconds
	s.ElapsedSeconds += o.ElapsedSeconds
	s.Failovers += o.Failovers
	s.IndexReads += o.IndexReads
	s.IndexBytesFetched += o.IndexBytesFetched
	s.PagesSkipped += o.PagesSkipped
	s.LateRowGroups += o.LateRowGroups
	s.BytesFromCache += o.BytesFromCache
}

// String formats the figures on one line, for logs.
func (s Stats) String() string {
	return fmt.Sprintf("files=%d endpoints=%d rows=%d rows_read=%d rows_filtered=%d batches=%d reads=%d bytes_fetched=%d bytes_used=%d bytes_wasted=%d bytes_unused=%d cache_hits=%d io=%.3fs elapsed=%.3fs",
		s.Files, s.Endpoints, s.Rows, s.RowsRead, s.RowsFiltered, s.Batches, s.Reads, s.BytesFetched, s.BytesUsed, s.BytesWasted, s.BytesUnused, s.CacheHits, s.IOSeconds, s.ElapsedSeconds) +
		failoversString(s.Failovers)
}

// failoversString is the line's failovers field, present only when some
// endpoint moved, so that lines of plain scans stay as they were.
func failoversString(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" failovers=%d", n)
}

// parseStats decodes a stream's application metadata.
func parseStats(meta []byte) (Stats, error) {
	st, err := wire.UnmarshalStats(meta)
	if err != nil {
		return Stats{}, fmt.Errorf("client: %w", err)
	}
	return StatsOf(st), nil
}
