package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/scand/scand/server"
)

// logFlags say how serve logs: the level and format of its lines, and
// whether it writes audit lines, which have a switch of their own so that
// --log-level warn quiets the per-stream lines without losing the audit.
type logFlags struct {
	level  slog.Level
	format logFormat
	audit  bool
}

// logFormat is text or json.
type logFormat string

func (f logFormat) String() string { return string(f) }

func defineLogFlags(fs *flag.FlagSet, f *logFlags) {
	f.format = "text"
	fs.Var(typedFlag(&f.level, parseLogLevel), "log-level", "`level` of the server's log lines: debug, info (one line per scan and stream), warn or error")
	fs.Var(typedFlag(&f.format, parseLogFormat), "log-format", "`format` of log lines: text (key=value) or json")
	fs.BoolVar(&f.audit, "audit-log", true, "write one audit line per GetFlightInfo and DoGet (identity, paths or file, rows, bytes, status) at level AUDIT, whatever --log-level says")
}

func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("unknown log level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

func parseLogFormat(s string) (logFormat, error) {
	switch s = strings.ToLower(s); s {
	case "text", "json":
		return logFormat(s), nil
	}
	return "", fmt.Errorf("unknown log format %q: use text or json", s)
}

// loggers builds the server's logger and its audit logger (nil when
// audit lines are off), both writing to w.
func (f logFlags) loggers(w io.Writer) (log, audit *slog.Logger) {
	handler := func(level slog.Level) slog.Handler {
		opts := &slog.HandlerOptions{Level: level, ReplaceAttr: auditLevelName}
		if f.format == "json" {
			return slog.NewJSONHandler(w, opts)
		}
		return slog.NewTextHandler(w, opts)
	}
	log = slog.New(handler(f.level))
	if f.audit {
		audit = slog.New(handler(server.LevelAudit))
	}
	return log, audit
}

// auditLevelName prints server.LevelAudit as AUDIT rather than INFO+2.
func auditLevelName(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey && len(groups) == 0 {
		if l, ok := a.Value.Any().(slog.Level); ok && l == server.LevelAudit {
			a.Value = slog.StringValue("AUDIT")
		}
	}
	return a
}
