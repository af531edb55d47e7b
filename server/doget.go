package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/wire"
)

// Batch sizing: aim each message at targetMessageBytes, and cut any batch
// over maxMessageBytes, under gRPC's default 4 MiB receive limit with room
// for IPC framing and estimation error.
const (
	targetMessageBytes = 2 << 20
	maxMessageBytes    = 3 << 20
	maxBatchRows       = 64 << 10
)

// ScanStats are the figures in the app_metadata of a stream's last message
// (sent as scandv1.StreamStats; see proto).
type ScanStats struct {
	Path    string
	Rows    int64
	Batches int64
	iosched.Stats
	ElapsedSeconds float64
}

var errLimitReached = errors.New("limit reached")

// DoGet executes one ScanTask and streams its batches.
func (s *Server) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) (err error) {
	defer recoverHandler(s.log, "DoGet", &err)
	start := time.Now()
	ctx := stream.Context()
	task := &scandv1.ScanTask{}
	if err := proto.Unmarshal(t.GetTicket(), task); err != nil || task.Path == "" {
		return toStatus(invalidf("ticket is not a scand ScanTask: pass the tickets of GetFlightInfo's endpoints unchanged"))
	}
	schema, err := flight.DeserializeSchema(task.Schema, s.mem)
	if err != nil {
		return toStatus(invalidf("ticket holds an invalid schema: %v", err))
	}
	o, err := s.open(ctx, storage.Info{Name: task.Path, Size: task.Size, Version: task.Version})
	if err != nil {
		return toStatus(err)
	}
	defer o.Close()
	proj, err := o.file.Project(task.Columns)
	if err != nil {
		return toStatus(err)
	}
	groups := make([]int, len(task.RowGroups))
	for i, g := range task.RowGroups {
		if int(g) < 0 || int(g) >= len(proj.Groups) {
			return toStatus(invalidf("ticket names row group %d, but %s has %d", g, task.Path, len(proj.Groups)))
		}
		groups[i] = int(g)
	}

	compression, err := wire.ParseCompression(task.Compression)
	if err != nil {
		return toStatus(invalidf("ticket: %v", err))
	}
	stats := ScanStats{Path: task.Path}
	w := s.newBatchWriter(stream, schema, compression)
	defer w.Close()
	// The last batch is held back so that it can carry the stream's figures
	// in app_metadata: stock clients only see app_metadata on data messages.
	var held arrow.RecordBatch
	defer func() {
		if held != nil {
			held.Release()
		}
	}()
	var ticket *iosched.Ticket // set below, before anything is sent
	send := func(rec arrow.RecordBatch) error {
		if held != nil {
			// Write blocks while the client does not read (flow control):
			// admission must know, or a client reading its streams in
			// order could wait forever for memory its other streams hold.
			ticket.Blocked(true)
			err := w.Write(held)
			ticket.Blocked(false)
			held.Release()
			held = nil
			if err != nil {
				rec.Release()
				return err
			}
		}
		held = rec
		stats.Batches++
		stats.Rows += rec.NumRows()
		return nil
	}

	remaining := task.Limit
	opts := scanner.ReadOptions{Groups: groups, BatchRows: task.BatchRows, Mem: s.mem}
	if opts.BatchRows == 0 {
		opts.BatchRows = batchRowsFor(proj, groups)
	}
	// Wait for decode memory before opening any decoder; a waiting stream
	// holds nothing but its ticket and file handle.
	ticket, err = s.sched.Admit(ctx, streamWorkBytes(proj, groups, opts.BatchRows))
	if err != nil {
		return toStatus(err)
	}
	defer ticket.Release()
	readErr := o.file.Read(ctx, proj, opts, func(rec arrow.RecordBatch) (err error) {
		// A panic here is scand's bug, not a corrupt file: report it as
		// such rather than letting the decoder's containment call it data
		// loss.
		defer recoverHandler(s.log, "DoGet", &err)
		out, err := conform(rec, schema, s.mem)
		rec.Release()
		if err != nil {
			return fmt.Errorf("%s: %w", task.Path, err)
		}
		if task.Limit > 0 {
			if out.NumRows() >= remaining {
				cut := out.NewSlice(0, remaining)
				out.Release()
				out = cut
			}
			remaining -= out.NumRows()
		}
		var sendErr error
		for _, piece := range splitBatch(out, task.BatchRows == 0) {
			if sendErr == nil {
				sendErr = send(piece)
			} else {
				piece.Release()
			}
		}
		if sendErr != nil {
			return sendErr
		}
		if task.Limit > 0 && remaining == 0 {
			return errLimitReached
		}
		return nil
	})
	if readErr != nil && !errors.Is(readErr, errLimitReached) {
		if serr := o.io.Err(); serr != nil {
			readErr = serr
		}
		stats.Stats = o.io.Stats()
		s.logScan(stats, start, readErr)
		return toStatus(readErr)
	}
	if held == nil {
		held = emptyBatch(schema, s.mem)
		stats.Batches++
	}
	stats.Stats = o.io.Stats()
	stats.ElapsedSeconds = time.Since(start).Seconds()
	meta := wire.MarshalStats(stats.proto())
	ticket.Blocked(true)
	err = w.WriteWithAppMetadata(held, meta)
	ticket.Blocked(false)
	held.Release()
	held = nil
	s.logScan(stats, start, err)
	return toStatus(err)
}

func (s *Server) logScan(st ScanStats, start time.Time, err error) {
	s.countScan(st.Rows, err)
	attrs := []any{"path", st.Path, "rows", st.Rows, "batches", st.Batches, "reads", st.Reads,
		"bytes_fetched", st.BytesFetched, "elapsed", time.Since(start)}
	if err != nil {
		s.log.Warn("scan failed", append(attrs, "err", err.Error())...)
		return
	}
	s.log.Info("scan", attrs...)
}

// batchRowsFor picks rows per batch so that a batch of the projected
// columns is about targetMessageBytes, judged from the row groups' sizes.
func batchRowsFor(p *scanner.Projection, groups []int) int64 {
	rows, bytes, _ := groupTotals(p, groups)
	if rows == 0 || bytes == 0 {
		return maxBatchRows
	}
	perRow := max(1, bytes/rows)
	return min(maxBatchRows, max(1, targetMessageBytes/perRow))
}

// streamWorkBytes estimates the memory a stream holds while it decodes:
// the reader's working memory for its largest group, and three batches
// (the one being built, the one held back for the figures, and the one
// gRPC is writing).
func streamWorkBytes(p *scanner.Projection, groups []int, batchRows int64) int64 {
	rows, bytes, work := groupTotals(p, groups)
	batch := bytes
	if rows > 0 && batchRows > 0 && batchRows < rows {
		batch = bytes / rows * batchRows
	}
	return work + 3*batch
}

// groupTotals sums the rows and decoded bytes of the chosen groups, and
// finds the largest working memory among them.
func groupTotals(p *scanner.Projection, groups []int) (rows, memBytes, maxWork int64) {
	for _, g := range groups {
		rows += p.Groups[g].Rows
		memBytes += p.Groups[g].MemBytes
		maxWork = max(maxWork, p.Groups[g].WorkBytes)
	}
	return rows, memBytes, maxWork
}
