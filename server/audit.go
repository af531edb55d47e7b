package server

import (
	"context"
	"log/slog"

	"google.golang.org/grpc/status"
)

// LevelAudit is the level of audit lines: between INFO and WARN, so that
// a handler at INFO shows them and one at WARN does not. cmd/scand gives
// audit lines a handler of their own, switched apart from --log-level.
const LevelAudit = slog.Level(2)

// audit writes one line per GetFlightInfo and per DoGet: who asked for
// what, and what came of it (the gRPC code the client saw). Without an
// audit logger it writes nothing.
func (s *Server) audit(ctx context.Context, method, identity string, err error, attrs ...any) {
	if s.cfg.Audit == nil {
		return
	}
	code := status.Code(toStatus(err))
	attrs = append([]any{"method", method, "identity", identity}, attrs...)
	attrs = append(attrs, "status", code.String())
	if err != nil {
		attrs = append(attrs, "err", truncateMessage(err.Error()))
	}
	s.cfg.Audit.Log(ctx, LevelAudit, "audit", attrs...)
}
