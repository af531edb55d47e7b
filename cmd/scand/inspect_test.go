package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scand/scand/client"
)

// scand schema and scand ls against a real server: the schema a scan
// returns, and the files under a prefix with their sizes, as the Python
// package's conn.schema and conn.list_files give them.
func TestSchemaAndLs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := serveDemo(t)
	// The demo data is the same each time it is written: its sizes here
	// are those the server has.
	root := t.TempDir()
	if _, err := writeDemoData(root); err != nil {
		t.Fatal(err)
	}
	size := func(name string) string {
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return formatBytes(fi.Size())
	}
	jan, feb := size("trips/2026-01.parquet"), size("trips/2026-02.parquet")
	w := max(len(jan), len(feb))
	listing := fmt.Sprintf("%*s  trips/2026-01.parquet\n%*s  trips/2026-02.parquet\n", w, jan, w, feb)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // substring
	}{
		{name: "schema of a directory", args: []string{"schema", "trips/"},
			stdout: "id: int64 not null\npickup_at: timestamp[us, tz=UTC] not null\ncity: utf8 not null\n" +
				"fare: float64\npickup: struct<lat: float64, lon: float64> not null\ntags: list<element: utf8, nullable>\n"},
		{name: "schema of some columns", args: []string{"schema", "--columns", "fare,pickup.lat", "trips/2026-01.parquet"},
			stdout: "fare: float64\npickup: struct<lat: float64> not null\n"},
		{name: "schema of a missing path", args: []string{"schema", "nope/"}, code: 1, stderr: "scand: NOT_FOUND: "},
		{name: "schema of an unknown column", args: []string{"schema", "--columns", "fair", "trips/"}, code: 1,
			stderr: `hint: did you mean "fare"?`},
		{name: "schema without a path", args: []string{"schema"}, code: 2, stderr: "no PATH given"},
		{name: "ls everything", args: []string{"ls"}, stdout: listing},
		{name: "ls a prefix", args: []string{"ls", "trips/2026-0"}, stdout: listing},
		{name: "ls a prefix that matches nothing", args: []string{"ls", "nope/"}, stdout: ""},
		{name: "ls two prefixes", args: []string{"ls", "a", "b"}, code: 2, stderr: "one PREFIX at most"},
		{name: "ls without S3", args: []string{"ls", "s3://bucket/trips/"}, code: 1,
			stderr: "scand: UNIMPLEMENTED: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := testEnv(map[string]string{"SCAND_SERVER": addr})
			code := run(context.Background(), tt.args, e)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if tt.code == 0 && stdout.String() != tt.stdout {
				t.Errorf("stdout\n%s\nwant\n%s", stdout, tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
		})
	}
}

// --stats shows where the fetched bytes went, in three lines that add up
// to them, and names the first files read.
func TestPrintStatsAddsUp(t *testing.T) {
	var b strings.Builder
	printStats(&b, client.Stats{Files: 18, Paths: []string{"f/00.parquet", "f/01.parquet", "f/02.parquet", "f/03.parquet"},
		BytesFetched: 2 << 20, BytesUsed: 1 << 20, BytesWasted: 256 << 10, BytesUnused: 768 << 10}, time.Second)
	for _, want := range []string{
		"files          18 (f/00.parquet, f/01.parquet, f/02.parquet, ... 1 more)\n",
		"bytes fetched  2.0 MiB (2097152) = used + wasted + unused\n",
		"  used         1.0 MiB (1048576, 50%, handed to the decoders)\n",
		"  wasted       256.0 KiB (262144, 12%, gaps read to merge requests)\n",
		"  unused       768.0 KiB (786432, 38%, read ahead, never needed)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("printStats lacks %q:\n%s", want, b.String())
		}
	}
}
