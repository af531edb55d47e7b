package client

import (
	"encoding/json"
	"fmt"
)

// Stats are the IO figures of a scan or of one of its streams.
//
// scand sends the figures of each DoGet stream as JSON application metadata
// on the stream's last message; that JSON decodes into a Stats with Path
// set. [Scan.Stats] sums the streams with [Stats.Add], which drops Path and
// counts Files and Endpoints instead.
type Stats struct {
	// Path is the file a single stream read; empty in a sum.
	Path string `json:"path,omitempty"`
	// Files is the number of distinct files summed (0 for a single stream).
	Files int `json:"files,omitempty"`
	// Endpoints is the number of streams summed (0 for a single stream).
	Endpoints int `json:"endpoints,omitempty"`

	Rows    int64 `json:"rows"`
	Batches int64 `json:"batches"`
	// Reads is the number of storage reads (GETs) the server issued.
	Reads int64 `json:"reads"`
	// BytesFetched is what the server read from storage; BytesUsed is the
	// part of it the decoders asked for. The difference is read-ahead that
	// was not needed.
	BytesFetched int64 `json:"bytes_fetched"`
	BytesUsed    int64 `json:"bytes_used"`
	// BytesPlanned is what the decoders announced they would need before
	// reading; BytesWasted is gap bytes read only to merge nearby ranges
	// into fewer requests.
	BytesPlanned int64 `json:"bytes_planned"`
	BytesWasted  int64 `json:"bytes_wasted"`
	// CacheHits counts file metadata served from the server's cache.
	CacheHits int64 `json:"cache_hits"`
	// Hole is the largest gap (bytes) the server read through to merge two
	// ranges. It is a setting, not a count: a sum keeps the largest.
	Hole int64 `json:"hole"`
	// IOSeconds is the time the server spent waiting on storage.
	IOSeconds float64 `json:"io_seconds"`
	// ElapsedSeconds is the server's time for the stream. In a sum it adds
	// up streams that ran in parallel, so it can exceed the wall time.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
}

// Add adds o's figures to s (Hole: the larger). The sum has no Path.
func (s *Stats) Add(o Stats) {
	s.Path = ""
	s.Files += o.Files
	s.Endpoints += o.Endpoints
	s.Rows += o.Rows
	s.Batches += o.Batches
	s.Reads += o.Reads
	s.BytesFetched += o.BytesFetched
	s.BytesUsed += o.BytesUsed
	s.BytesPlanned += o.BytesPlanned
	s.BytesWasted += o.BytesWasted
	s.CacheHits += o.CacheHits
	s.Hole = max(s.Hole, o.Hole)
	s.IOSeconds += o.IOSeconds
	s.ElapsedSeconds += o.ElapsedSeconds
}

// String formats the figures on one line, for logs.
func (s Stats) String() string {
	return fmt.Sprintf("files=%d endpoints=%d rows=%d batches=%d reads=%d bytes_fetched=%d bytes_used=%d bytes_wasted=%d cache_hits=%d io=%.3fs elapsed=%.3fs",
		s.Files, s.Endpoints, s.Rows, s.Batches, s.Reads, s.BytesFetched, s.BytesUsed, s.BytesWasted, s.CacheHits, s.IOSeconds, s.ElapsedSeconds)
}

// parseStats decodes a stream's application metadata.
func parseStats(meta []byte) (Stats, error) {
	var st Stats
	if err := json.Unmarshal(meta, &st); err != nil {
		return Stats{}, fmt.Errorf("client: stream stats %q: %w", truncate(meta, 200), err)
	}
	return st, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
