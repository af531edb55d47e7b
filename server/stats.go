package server

import (
	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// proto copies a stream's figures into the message the stream's last batch
// carries as app_metadata (encoded by wire.MarshalStats).
func (st ScanStats) proto() *scandv1.StreamStats {
	return &scandv1.StreamStats{
		Path:           st.Path,
		Rows:           st.Rows,
		Batches:        st.Batches,
		Reads:          st.Reads,
		BytesFetched:   st.BytesFetched,
		BytesUsed:      st.BytesUsed,
		BytesPlanned:   st.BytesPlanned,
		BytesWasted:    st.BytesWasted,
		CacheHits:      st.CacheHits,
		Hole:           st.Hole,
		IoSeconds:      st.IOSeconds,
		ElapsedSeconds: st.ElapsedSeconds,
	}
}

// scanStatsOf is proto's inverse, for readers of the metadata (tests).
func scanStatsOf(m *scandv1.StreamStats) ScanStats {
	return ScanStats{
		Path:    m.GetPath(),
		Rows:    m.GetRows(),
		Batches: m.GetBatches(),
		Stats: iosched.Stats{
			Reads:        m.GetReads(),
			BytesFetched: m.GetBytesFetched(),
			BytesUsed:    m.GetBytesUsed(),
			BytesPlanned: m.GetBytesPlanned(),
			BytesWasted:  m.GetBytesWasted(),
			CacheHits:    m.GetCacheHits(),
			Hole:         m.GetHole(),
			IOSeconds:    m.GetIoSeconds(),
		},
		ElapsedSeconds: m.GetElapsedSeconds(),
	}
}
