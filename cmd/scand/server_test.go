package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scand/scand/client"
)

// These tests run the real server in-process on 127.0.0.1:0.

func TestDemoOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	e, stdout, stderr := testEnv(nil)
	code := run(context.Background(), []string{"demo", "--once", "--listen", "127.0.0.1:0", "--dir", dir}, e)
	if code != 0 {
		t.Fatalf("demo --once exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	out := stdout.String()
	for _, want := range []string{
		"trips/2026-01.parquet     10000 rows, 4 row groups",
		"trips/2026-02.parquet     10000 rows, 4 row groups",
		"city        fare  pickup",
		"(5 rows)",
		"endpoints      ",
		`client = flight.connect("grpc://127.0.0.1:`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "until Ctrl-C") {
		t.Errorf("--once should not offer to keep serving:\n%s", out)
	}
}

// TestServeAndScan runs `scand serve` configured from the environment and
// scans it with `scand scan` in each format, then stops it as SIGINT would.
func TestServeAndScan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	root := t.TempDir()
	if _, err := writeDemoData(root); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	e, _, serveLog := testEnv(map[string]string{"SCAND_ROOT": root, "SCAND_LISTEN": "127.0.0.1:0"})
	served := make(chan int, 1)
	go func() { served <- run(ctx, []string{"serve"}, e) }()

	addrRE := regexp.MustCompile(`scand serving root=\S+ on (grpc://127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; {
		if m := addrRE.FindStringSubmatch(serveLog.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no serving line in the log:\n%s", serveLog)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(serveLog.String(), "root="+root+" ") {
		t.Errorf("serving line does not name the root %s:\n%s", root, serveLog)
	}

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // substring
	}{
		{
			name: "csv",
			args: []string{"trips/2026-01.parquet", "--columns", "id,city", "--limit", "3", "--format", "csv"},
			stdout: "id,city\n" +
				"1000000,Berlin\n" +
				"1000001,Amsterdam\n" +
				"1000002,Lisbon\n",
		},
		{
			name:   "json with nested column",
			args:   []string{"trips/2026-02.parquet", "--columns", "id,pickup.lat,tags", "--limit", "2", "--format", "json"},
			stdout: "{\"id\":2000000,\"pickup\":{\"lat\":51.50562},\"tags\":[]}\n{\"id\":2000001,\"pickup\":{\"lat\":52.56734},\"tags\":[\"card\",\"cash\"]}\n",
		},
		{
			name: "table with stats",
			args: []string{"trips/", "--columns", "fare", "--limit", "2", "--stats"},
			stdout: " fare\n" +
				"-----\n" +
				"31.22\n" +
				" 4.22\n" +
				"(2 rows)\n",
			stderr: "bytes fetched",
		},
		{
			name: "unknown column",
			args: []string{"trips/", "--columns", "fair"},
			code: 1,
			// The hint comes from the file's own columns.
			stderr: "scand: INVALID_ARGUMENT: unknown column \"fair\"; available columns: id, pickup_at, city, fare, " +
				"pickup, pickup.lat, pickup.lon, tags\nhint: did you mean \"fare\"?\n",
		},
		{
			name:   "no such file",
			args:   []string{"nope.parquet"},
			code:   1,
			stderr: "scand: NOT_FOUND: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := testEnv(map[string]string{"SCAND_SERVER": addr})
			code := run(ctx, append([]string{"scan"}, tt.args...), e)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, stderr)
			}
			if tt.code == 0 && stdout.String() != tt.stdout {
				t.Errorf("stdout\n%s\nwant\n%s", stdout, tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
			if tt.code != 0 && strings.Count(stderr.String(), "\n") != 2 {
				t.Errorf("error output is not the error and its hint: %q", stderr)
			}
		})
	}

	// The server also answers the client's other calls.
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Version(ctx); err != nil || v != version {
		t.Errorf("Version() = %q, %v; want %q", v, err, version)
	}
	c.Close()

	stop()
	select {
	case code := <-served:
		if code != 0 {
			t.Fatalf("serve exited %d after stop:\n%s", code, serveLog)
		}
	case <-time.After(defaultDrainTimeout + 5*time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(serveLog.String(), "scand stopped") {
		t.Errorf("no stop line in the log:\n%s", serveLog)
	}
}
