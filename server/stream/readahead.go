package stream

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/scand/scand/internal/spans"
)

// Read-ahead: decode the next batch while the previous one is on the wire.
//
// Without it a stream's decoder waits for every write: gRPC's flow
// control holds a Write until the client has taken most of the message,
// so decoding and the client's reading take turns. With it, send starts
// writing the batch it held back and returns at once; the decoder builds
// the next batch meanwhile, and the next send (or finish) first waits for
// that write. One write is in flight at most, so the order of messages is
// the decoder's, and the stream holds one batch more than without it
// (streamWorkBytes charges it to the admission grant):
//
//	decoder:  decode N+1 ........ send(N+1): wait for N, write N+1 → held N+1 … decode N+2
//	wire:     write N ──────────┘                 └─ write N+1 ─────────
//
// The waiting, not the write, is what admission sees as blocked (Blocked,
// Park after parkAfter), since only then does the stream decode nothing;
// the idle timeout still counts from the write's start.

// pendingWrite is the write in flight: its result, once it returns, and
// when it began.
type pendingWrite struct {
	done  chan error
	start time.Time
	end   func(error) error // ends the send span
}

// readAhead reports whether the stream's sends overlap its decoding
// (Config.DecodeParallelism other than 1).
func (st *stream) readAhead() bool { return st.cfg.DecodeParallelism != 1 }

// startWrite begins writing rec (with meta, when not nil) on a goroutine
// that holds its own reference to rec. Only one write may be in flight:
// the caller waits for the previous one (awaitWrite) first.
func (st *stream) startWrite(rec arrow.RecordBatch, meta []byte) *pendingWrite {
	span := st.startSend(rec)
	pw := &pendingWrite{done: make(chan error, 1), start: time.Now(),
		end: func(err error) error { return spans.End(span, err) }}
	rec.Retain()
	go func() {
		defer rec.Release()
		if meta != nil {
			pw.done <- st.w.WriteWithAppMetadata(rec, meta)
			return
		}
		pw.done <- st.w.Write(rec)
	}()
	return pw
}

// awaitWrite waits for the write in flight, if any, and takes the
// grant's parked estimate back once it returns (the decoder goes on
// after it). A write blocked past the idle timeout is given up on as in
// writeWithin: it still runs, and close closes the writer once it ends.
func (st *stream) awaitWrite() error {
	pw := st.inflight
	if pw == nil {
		return nil
	}
	st.inflight = nil
	st.grant.Blocked(true)
	defer st.grant.Blocked(false)
	idle := st.cfg.StreamIdleTimeout
	timer := time.NewTimer(max(0, idle-time.Since(pw.start)))
	park := time.NewTimer(parkAfter)
	defer timer.Stop()
	defer park.Stop()
	for {
		select {
		case err := <-pw.done:
			if err = pw.end(err); err != nil {
				return err
			}
			return st.unpark()
		case <-park.C:
			st.park()
		case <-st.grant.Cut():
			st.stuck = pw.done
			return pw.end(st.cutErr())
		case <-timer.C:
			st.stuck = pw.done
			return pw.end(&Error{Kind: IdleTimeout, Msg: fmt.Sprintf(
				"%s: the client read nothing for %v, so the server ended the stream (--stream-idle-timeout); read streams as their data arrives, or open fewer at once",
				st.task.Path, idle)})
		}
	}
}

// sendAhead is send with read-ahead: it waits for the write in flight,
// starts writing the batch held back, and holds rec instead.
func (st *stream) sendAhead(rec arrow.RecordBatch) error {
	if err := st.awaitWrite(); err != nil {
		rec.Release()
		return err
	}
	if st.held != nil {
		st.inflight = st.startWrite(st.held, nil)
		st.held.Release() // the writing goroutine holds its own reference
		st.held = nil
	}
	st.held = rec
	st.stats.Batches++
	st.stats.Rows += rec.NumRows()
	st.sentBytes += BatchBytes(rec)
	return nil
}
