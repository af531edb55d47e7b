package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/scand/scand/server"
)

func TestLogFlags(t *testing.T) {
	tests := []struct {
		name       string
		flags      logFlags
		wantInfo   bool
		wantAudit  bool
		wantFormat string
	}{
		{"defaults", logFlags{level: slog.LevelInfo, format: "text", audit: true}, true, true, "text"},
		{"warn keeps the audit", logFlags{level: slog.LevelWarn, format: "text", audit: true}, false, true, "text"},
		{"audit off", logFlags{level: slog.LevelInfo, format: "json", audit: false}, true, false, "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, audit := tt.flags.loggers(&buf)
			log.Info("scan", "rows", 1)
			if audit != nil {
				audit.Log(context.Background(), server.LevelAudit, "audit", "identity", "alice")
			}
			out := buf.String()
			if got := strings.Contains(out, "scan"); got != tt.wantInfo {
				t.Errorf("info line written: %v, want %v:\n%s", got, tt.wantInfo, out)
			}
			if got := strings.Contains(out, "AUDIT"); got != tt.wantAudit {
				t.Errorf("audit line written: %v, want %v:\n%s", got, tt.wantAudit, out)
			}
			if tt.wantFormat == "json" {
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					if !json.Valid([]byte(line)) {
						t.Errorf("not JSON: %s", line)
					}
				}
			}
		})
	}
	if _, err := parseLogLevel("loud"); err == nil {
		t.Error("parseLogLevel accepted loud")
	}
	if _, err := parseLogFormat("xml"); err == nil {
		t.Error("parseLogFormat accepted xml")
	}
}
