package stream

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/wire"
)

// Config is what a stream needs from the server that runs it: the IO
// scheduler, admission, the allocator, how files open, and the hooks
// through which its end is logged, audited and counted.
type Config struct {
	Scheduler *iosched.Scheduler
	Admission *admission.Controller
	Mem       memory.Allocator
	Log       *slog.Logger

	// Open opens a file through the scheduler and the reader for its
	// format, checked against the caller's scope (the context's).
	Open func(ctx context.Context, info storage.Info) (*Opened, error)
	// CheckFile checks a file opened directly (a deletion vector)
	// against the scope of the context's caller.
	CheckFile func(ctx context.Context, info storage.Info) error
	// Audit records a stream's end for the caller.
	Audit func(ctx context.Context, method, identity string, err error, attrs ...any)
	// CountScan and CountFiltered feed the server's metrics.
	CountScan     func(rows, bytes int64, err error)
	CountFiltered func(rows int64)

	SendPath            wire.SendPath    // how batches are written (sendpath.go)
	Compression         wire.Compression // for requests that name none
	DecodeParallelism   int              // 1 turns read-ahead off (readahead.go)
	MaxIndexBytes       int64            // scanner.ReadOptions.MaxIndexBytes
	LateMaterialization scanner.LateMode
	FilesAhead          int // 0 = DefaultFilesAhead, negative = none (ahead.go)
	// DecodeAhead: 0 decodes a packed endpoint's next file ahead with
	// more than one core and read-ahead on, negative never, positive
	// always (decodeahead.go).
	DecodeAhead       int
	StreamIdleTimeout time.Duration // a client that reads nothing this long ends its stream
}

// Opened is a file open for reading: the IO handle and the format reader.
type Opened struct {
	IO   *iosched.File
	File scanner.File
	Done func() error
	// deletes are the file's deletes made ready while it opened
	// (deletesahead.go); nil: none.
	deletes *readyDeletes
}

// Close closes the format reader and the IO handle, and the deletes made
// ready for the file that the stream did not take.
func (o *Opened) Close() error {
	if o.Done != nil {
		o.Done()
	}
	o.deletes.close()
	return o.IO.Close()
}

// Kind classifies the stream's own errors; the server maps each to a
// gRPC code (server/status.go).
type Kind int

const (
	// Invalid is a ticket the stream cannot execute (InvalidArgument).
	Invalid Kind = iota + 1
	// IdleTimeout is a client that read nothing for StreamIdleTimeout
	// (DeadlineExceeded).
	IdleTimeout
	// Panic is a panic that escaped the scanner's containment (Internal).
	Panic
)

// Error is an error of the stream's own, with its kind.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...)}
}

// Run executes task and streams its batches to out: identity and peer are
// the caller's, for the log line and their fair shares of decode memory.
// Errors are the layers' own, classified; the caller maps them.
func Run(ctx context.Context, cfg *Config, task *scandv1.ScanTask, compression wire.Compression, out flight.FlightService_DoGetServer, identity, peer string) error {
	st := &stream{cfg: cfg, task: task, compression: compression, out: out, start: time.Now(), identity: identity,
		peer: peer, stats: &scandv1.StreamStats{Path: task.Path}, remaining: task.Limit}
	defer st.close()
	return st.changedCause(st.run(ctx))
}

// recoverPanic turns a panic that escaped the scanner's own containment
// into a Panic error for this request, and logs its stack.
func recoverPanic(log *slog.Logger, method string, err *error) {
	if r := recover(); r != nil {
		log.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
		*err = &Error{Kind: Panic, Msg: fmt.Sprintf("%s failed: internal error (%v); the server logged the details", method, r)}
	}
}
