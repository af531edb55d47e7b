package server

import (
	"context"
	"net"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/peer"

	"github.com/scand/scand/server/stream"
	"github.com/scand/scand/storage"
)

// DoGet executes one ScanTask and streams its batches: the ticket is
// verified and decoded here, the caller's limits taken, and the stream
// (package server/stream) runs the task.
func (s *Server) DoGet(t *flight.Ticket, out flight.FlightService_DoGetServer) (err error) {
	defer recoverHandler(s.log, "DoGet", &err)
	c := s.callerOf(out.Context())
	task, compression, err := s.openTicket(c, t.GetTicket())
	if err != nil {
		s.log.Warn("DoGet refused", "identity", c.id.Name, "err", err.Error())
		s.audit(out.Context(), "DoGet", c.id.Name, err)
		return toStatus(err)
	}
	if stream.RowsFromTicket(task) { // nothing to read: the ticket's rows
		err := stream.SendTicketRows(s.streamCfg, out, task, compression)
		s.audit(out.Context(), "DoGet", c.id.Name, err, "path", task.Path, "rows_only", true)
		return toStatus(err)
	}
	release, err := s.acquireStream(c)
	if err != nil {
		s.audit(out.Context(), "DoGet", c.id.Name, err, "path", task.Path)
		return toStatus(err)
	}
	defer release()
	releasePeer, err := s.peerStreams.Acquire(peerKey(out.Context()))
	if err != nil {
		s.audit(out.Context(), "DoGet", c.id.Name, err, "path", task.Path)
		return toStatus(err)
	}
	defer releasePeer()
	return toStatus(stream.Run(out.Context(), s.streamCfg, task, compression, out, c.id.Name, peerKey(out.Context())))
}

// streamConfig wires streams to the server: files open through the IO
// scheduler under the caller's scope, decode memory comes from admission,
// and a stream's end is logged, audited and counted here.
func (s *Server) streamConfig() *stream.Config {
	return &stream.Config{
		Scheduler: s.sched,
		Admission: s.admit,
		Mem:       s.mem,
		Log:       s.log,
		Open:      s.open,
		CheckFile: func(ctx context.Context, info storage.Info) error {
			return s.callerOf(ctx).CheckFile(info)
		},
		Audit:               s.audit,
		CountScan:           s.countScan,
		CountFiltered:       s.countFiltered,
		SendPath:            s.cfg.SendPath,
		Compression:         s.cfg.Compression,
		DecodeParallelism:   s.cfg.DecodeParallelism,
		MaxIndexBytes:       s.cfg.Planning.MaxIndexBytes,
		LateMaterialization: s.cfg.Planning.LateMaterialization,
		FilesAhead:          s.cfg.Planning.FilesAhead,
		StreamIdleTimeout:   s.cfg.Limits.StreamIdleTimeout,
	}
}

// peerKey names the client a stream counts against: its address without
// the port, since one client opens many connections.
func peerKey(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
		return host
	}
	return p.Addr.String()
}

// DefaultFilesAhead is Planning.FilesAhead's default (stream.DefaultFilesAhead).
const DefaultFilesAhead = stream.DefaultFilesAhead
