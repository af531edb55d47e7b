package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/client"
	"github.com/scand/scand/iosched"
	"github.com/scand/scand/storage/local"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a server's
// logger and a test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testEnv returns an env with the given variables and its output buffers.
func testEnv(vars map[string]string) (env, *syncBuffer, *syncBuffer) {
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	return env{
		stdout: stdout,
		stderr: stderr,
		getenv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
	}, stdout, stderr
}

func TestEnvName(t *testing.T) {
	tests := map[string]string{
		"listen":      "SCAND_LISTEN",
		"split-bytes": "SCAND_SPLIT_BYTES",
		"batch-rows":  "SCAND_BATCH_ROWS",
	}
	for flagName, want := range tests {
		if got := envName(flagName); got != want {
			t.Errorf("envName(%q) = %q, want %q", flagName, got, want)
		}
	}
}

func TestParseServe(t *testing.T) {
	def, err := parseServe(nil, env{stderr: &bytes.Buffer{}, getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*serveFlags)) serveFlags {
		s := def
		f(&s)
		return s
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want serveFlags
		err  error
	}{
		{name: "defaults", want: with(func(s *serveFlags) {})},
		{
			name: "flags",
			args: []string{"--listen", "0.0.0.0:9000", "--root=/data", "--split-bytes", "1048576"},
			want: with(func(s *serveFlags) { s.listen, s.root, s.splitBytes = "0.0.0.0:9000", "/data", 1<<20 }),
		},
		{
			name: "env",
			env:  map[string]string{"SCAND_LISTEN": ":7000", "SCAND_ROOT": "/srv", "SCAND_SPLIT_BYTES": "32MiB"},
			want: with(func(s *serveFlags) { s.listen, s.root, s.splitBytes = ":7000", "/srv", 32<<20 }),
		},
		{
			name: "flag beats env",
			args: []string{"-listen", "127.0.0.1:1"},
			env:  map[string]string{"SCAND_LISTEN": ":7000"},
			want: with(func(s *serveFlags) { s.listen = "127.0.0.1:1" }),
		},
		{
			name: "bare port is loopback",
			args: []string{"--listen", "31820", "--metrics-listen", "9090"},
			want: with(func(s *serveFlags) { s.listen, s.metricsListen = "127.0.0.1:31820", "127.0.0.1:9090" }),
		},
		{
			name: "all interfaces only when asked",
			args: []string{"--listen", ":31820", "--metrics-listen", "0.0.0.0:9090"},
			want: with(func(s *serveFlags) { s.listen, s.metricsListen = ":31820", "0.0.0.0:9090" }),
		},
		{
			name: "grpc scheme accepted",
			args: []string{"--listen", "grpc://127.0.0.1:2"},
			want: with(func(s *serveFlags) { s.listen = "127.0.0.1:2" }),
		},
		{
			name: "io flags and env",
			args: []string{"--io-memory", "2GiB", "--io-concurrency=4", "--io-no-coalesce", "--io-hole", "1MiB", "--io-tolerance", "0.25"},
			env:  map[string]string{"SCAND_IO_WINDOW": "8MiB", "SCAND_META_CACHE": "1MB", "SCAND_IO_TAIL_SIZE": "16KiB", "SCAND_IO_MAX_REQUEST": "4MiB"},
			want: with(func(s *serveFlags) {
				s.io.Memory, s.io.Concurrency, s.io.NoCoalesce, s.io.Hole, s.io.Tolerance = 2<<30, 4, true, 1<<20, 0.25
				s.io.Window, s.io.MetaCacheBytes, s.io.TailSize, s.io.MaxRequest = 8<<20, 1e6, 16<<10, 4<<20
			}),
		},
		{
			name: "local read mode",
			args: []string{"--local-read", "mmap"},
			want: with(func(s *serveFlags) { s.localRead = local.ReadMmap }),
		},
		{name: "local read from env", env: map[string]string{"SCAND_LOCAL_READ": "mmap"}, want: with(func(s *serveFlags) { s.localRead = local.ReadMmap })},
		{
			name: "membership",
			args: []string{"--peers", "10.0.0.1:8815,10.0.0.2:8815", "--advertise", "grpc://10.0.0.1:8815", "--drain-timeout", "40s", "--ticket-key-file", "k"},
			want: with(func(s *serveFlags) {
				s.cluster.peers, s.cluster.advertise, s.cluster.drainTimeout = "10.0.0.1:8815,10.0.0.2:8815", "grpc://10.0.0.1:8815", 40*time.Second
				s.security.ticketKeyFile = "k"
			}),
		},
		{
			name: "membership from env",
			env:  map[string]string{"SCAND_PEERS_DNS": "scand.ns.svc.cluster.local:8815", "SCAND_TICKET_KEY_FILE": "k"},
			want: with(func(s *serveFlags) {
				s.cluster.peersDNS, s.security.ticketKeyFile = "scand.ns.svc.cluster.local:8815", "k"
			}),
		},
		{name: "peers without a shared ticket key", args: []string{"--peers", "a:1"}, err: errUsage},
		{name: "peers and peers-dns", args: []string{"--peers", "a:1", "--peers-dns", "b:1", "--ticket-key-file", "k"}, err: errUsage},
		{name: "advertise alone", args: []string{"--advertise", "grpc://a:1"}, err: errUsage},
		{name: "advertise not a location", args: []string{"--peers", "a:1", "--advertise", "a:1", "--ticket-key-file", "k"}, err: errUsage},
		{name: "advertise tls without tls", args: []string{"--peers", "a:1", "--advertise", "grpc+tls://a:1", "--ticket-key-file", "k"}, err: errUsage},
		{name: "negative drain timeout", args: []string{"--drain-timeout", "-1s"}, err: errUsage},
		{name: "bad local read mode", args: []string{"--local-read", "aio"}, err: errUsage},
		{name: "bad env value", env: map[string]string{"SCAND_SPLIT_BYTES": "lots"}, err: errUsage},
		{name: "negative split", args: []string{"--split-bytes", "-1"}, err: errUsage},
		{name: "zero io concurrency", args: []string{"--io-concurrency", "0"}, err: errUsage},
		{name: "planning concurrency", args: []string{"--footer-concurrency", "16", "--files-ahead", "-1"},
			want: with(func(s *serveFlags) { s.footerConcurrency, s.filesAhead = 16, -1 })},
		{name: "negative footer concurrency", args: []string{"--footer-concurrency", "-1"}, err: errUsage},
		{name: "decode parallelism", args: []string{"--decode-parallelism", "1"}, want: with(func(s *serveFlags) { s.decodePar = 1 })},
		{name: "negative decode parallelism", args: []string{"--decode-parallelism", "-1"}, err: errUsage},
		{name: "stray argument", args: []string{"data"}, err: errUsage},
		{name: "unknown flag", args: []string{"--port", "1"}, err: errUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := testEnv(tt.env)
			got, err := parseServe(tt.args, e)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		str  string // String() of the parsed value
		err  string
	}{
		{in: "0", want: 0, str: "0"},
		{in: "1234", want: 1234, str: "1234"},
		{in: "1024", want: 1024, str: "1KiB"},
		{in: "64MiB", want: 64 << 20, str: "64MiB"},
		{in: "64mib", want: 64 << 20, str: "64MiB"},
		{in: "64Mi", want: 64 << 20, str: "64MiB"},
		{in: "64M", want: 64 << 20, str: "64MiB"},
		{in: "1.5 GiB", want: 3 << 29, str: "1536MiB"},
		{in: "2TiB", want: 2 << 40, str: "2TiB"},
		{in: "500kb", want: 500_000, str: "500000"},
		{in: "1GB", want: 1e9, str: "1000000000"},
		{in: "12B", want: 12, str: "12"},
		{in: "-1", err: "negative"},
		{in: "1.5", err: "not a byte count"},
		{in: "MiB", err: "not a size"},
		{in: "3 parsecs", err: "unknown unit"},
		{in: "9999999TiB", err: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var b byteSize
			err := b.Set(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Set(%q) = %v, want error containing %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || int64(b) != tt.want || b.String() != tt.str {
				t.Fatalf("Set(%q) = %d (%s), %v; want %d (%s)", tt.in, int64(b), b.String(), err, tt.want, tt.str)
			}
		})
	}
}

func TestParseScan(t *testing.T) {
	defaults := scanFlags{requestFlags: requestFlags{server: client.DefaultAddr}, format: formatTable, progress: progressAuto, maxRows: 100}
	with := func(f func(*scanFlags)) scanFlags {
		s := defaults
		f(&s)
		return s
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want scanFlags
		err  error
	}{
		{
			name: "path only",
			args: []string{"a.parquet"},
			want: with(func(s *scanFlags) { s.paths = []string{"a.parquet"} }),
		},
		{
			name: "flags after paths",
			args: []string{"a.parquet", "b/", "--columns", "x, y.z", "--limit", "5", "--format=json", "--stats"},
			want: with(func(s *scanFlags) {
				s.paths = []string{"a.parquet", "b/"}
				s.columns, s.limit, s.format, s.stats = "x, y.z", 5, formatJSON, true
			}),
		},
		{
			name: "env",
			args: []string{"a.parquet"},
			env:  map[string]string{"SCAND_SERVER": "grpc://h:1", "SCAND_FORMAT": "csv", "SCAND_BATCH_ROWS": "10", "SCAND_STATS": "true"},
			want: with(func(s *scanFlags) {
				s.paths = []string{"a.parquet"}
				s.server, s.format, s.batchRows, s.stats = "grpc://h:1", formatCSV, 10, true
			}),
		},
		{
			name: "double dash ends flags",
			args: []string{"--limit", "1", "--", "--odd-name.parquet"},
			want: with(func(s *scanFlags) { s.paths = []string{"--odd-name.parquet"}; s.limit = 1 }),
		},
		{
			name: "parquet output and progress",
			args: []string{"a", "--format", "parquet", "--output", "out.parquet", "--progress=off"},
			want: with(func(s *scanFlags) {
				s.paths = []string{"a"}
				s.format, s.output, s.progress = formatParquet, "out.parquet", progressOff
			}),
		},
		{
			name: "split bytes and compression",
			args: []string{"a", "--split-bytes", "16MiB", "--compression", "zstd"},
			want: with(func(s *scanFlags) { s.paths = []string{"a"}; s.splitBytes, s.compress = 16<<20, "zstd" }),
		},
		{
			name: "csv to a file",
			args: []string{"a", "--format", "csv", "--output", "out.csv"},
			want: with(func(s *scanFlags) { s.paths = []string{"a"}; s.format, s.output = formatCSV, "out.csv" }),
		},
		{name: "parquet needs output", args: []string{"a", "--format", "parquet"}, err: errUsage},
		{name: "arrow not to stdout", args: []string{"a", "--format", "arrow", "--output", "-"}, err: errUsage},
		{name: "bad progress", args: []string{"a", "--progress", "maybe"}, err: errUsage},
		{name: "no path", args: []string{"--limit", "1"}, err: errUsage},
		{name: "bad format", args: []string{"--format", "xml", "a"}, err: errUsage},
		{name: "negative limit", args: []string{"--limit", "-1", "a"}, err: errUsage},
		{name: "bad env", args: []string{"a"}, env: map[string]string{"SCAND_LIMIT": "ten"}, err: errUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := testEnv(tt.env)
			got, err := parseScan(tt.args, e)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestScanRequestFromFlags(t *testing.T) {
	f := scanFlags{requestFlags: requestFlags{paths: []string{"a"}, columns: " x, y.z ,,", limit: 3}, batchRows: 7, splitBytes: 1 << 20}
	req := f.request()
	if got := fmt.Sprint(req.Paths, req.Columns, req.Limit, req.BatchRows, req.SplitBytes); got != "[a] [x y.z] 3 7 1048576" {
		t.Fatalf("request = %s", got)
	}
}

func TestRunExitCodes(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := lis.Addr().String()
	lis.Close()

	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		code        int
		stdout      string // wanted substring
		stderr      string // wanted substring
		stderrLines int    // when not 0, the lines stderr must have
	}{
		{name: "no command", code: 2, stderr: "Usage:"},
		{name: "help", args: []string{"help"}, code: 0, stdout: "scand scan"},
		{name: "unknown command", args: []string{"sacn"}, code: 2, stderr: `unknown command "sacn"`},
		{name: "command help", args: []string{"scan", "-h"}, code: 0, stderr: "SCAND_<FLAG>"},
		{name: "version", args: []string{"version"}, code: 0, stdout: "scand dev\n"},
		{name: "--version", args: []string{"--version"}, code: 0, stdout: "scand dev\n"},
		{name: "-version", args: []string{"-version"}, code: 0, stdout: "scand dev\n"},
		{name: "usage error is short", args: []string{"scan", "--bogus", "a"}, code: 2, stderrLines: 2,
			stderr: "scand scan: flag provided but not defined: -bogus\nsee scand scan --help\n"},
		{name: "bad flag value is short", args: []string{"serve", "--io-concurrency", "x"}, code: 2, stderrLines: 2,
			stderr: "see scand serve --help"},
		{name: "unknown command is short", args: []string{"sacn"}, code: 2, stderrLines: 2, stderr: "see scand --help"},
		{name: "scan without path", args: []string{"scan"}, code: 2, stderr: "no PATH given\nsee scand scan --help\n", stderrLines: 2},
		{name: "explain without path", args: []string{"explain"}, code: 2, stderr: "no PATH given"},
		{name: "table and paths", args: []string{"scan", "--table", "wh/t", "a.parquet"}, code: 2, stderr: "--table and PATHs exclude each other"},
		{name: "snapshot without table", args: []string{"scan", "--snapshot-id", "3", "a.parquet"}, code: 2, stderr: "choose a snapshot or version of a --table"},
		{name: "version without table", args: []string{"scan", "--table-version", "3", "a.parquet"}, code: 2, stderr: "choose a snapshot or version of a --table"},
		{name: "help lists explain", args: []string{"help"}, code: 0, stdout: "scand explain"},
		{name: "parquet without output", args: []string{"scan", "--format", "parquet", "a"}, code: 2, stderr: "give --output FILE"},
		{name: "bad env", args: []string{"serve"}, env: map[string]string{"SCAND_SPLIT_BYTES": "x"}, code: 2, stderr: "SCAND_SPLIT_BYTES"},
		{
			name: "server not running",
			args: []string{"scan", "--server", "grpc://" + deadAddr, "a.parquet"},
			code: 1, stderrLines: 2,
			stderr: "scand: UNAVAILABLE: scand at " + deadAddr + " is not reachable: ",
		},
		{name: "bad address", args: []string{"scan", "--server", "http://x", "a"}, code: 1, stderr: `unknown scheme "http"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := testEnv(tt.env)
			if code := run(context.Background(), tt.args, e); code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if n := strings.Count(stderr.String(), "\n"); tt.stderrLines != 0 && n != tt.stderrLines {
				t.Errorf("stderr has %d lines, want %d: %q", n, tt.stderrLines, stderr)
			}
		})
	}
}

func TestErrorLine(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "server error names the code in words",
			err:  &client.Error{Op: "plan scan", Addr: "h:1", Code: codes.InvalidArgument, Message: `unknown column "x"`},
			want: `scand: INVALID_ARGUMENT: unknown column "x"`,
		},
		{
			name: "multi-line message becomes one line",
			err:  &client.Error{Op: "scan", Code: codes.DataLoss, Message: "corrupt page\n  in a.parquet"},
			want: "scand: DATA_LOSS: corrupt page; in a.parquet",
		},
		{
			name: "unreachable keeps the hint",
			err:  &client.Error{Op: "scan", Addr: "h:1", Code: codes.Unavailable, Message: "connection error: refused"},
			want: "scand: UNAVAILABLE: scand at h:1 is not reachable: connection error: refused\n" +
				"hint: is `scand serve` running there? Check the address and port",
		},
		{
			name: "wrapped",
			err:  fmt.Errorf("context: %w", &client.Error{Code: codes.NotFound, Message: "no such file"}),
			want: "scand: NOT_FOUND: no such file\nhint: paths are relative to the server's --root; check the name or the glob",
		},
		{
			name: "code not repeated",
			err:  &client.Error{Code: codes.InvalidArgument, Message: "open a.csv: invalid argument"},
			want: "scand: INVALID_ARGUMENT: open a.csv",
		},
		{
			name: "hint from the file's columns",
			err:  &client.Error{Code: codes.InvalidArgument, Message: `unknown column "fair"; available columns: id, fare`},
			want: "scand: INVALID_ARGUMENT: unknown column \"fair\"; available columns: id, fare\nhint: did you mean \"fare\"?",
		},
		{name: "plain", err: errors.New("listen on x: boom"), want: "scand: listen on x: boom"},
		{name: "bare status", err: status.Error(codes.Internal, "oops"), want: "scand: rpc error: code = Internal desc = oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorLine(tt.err); got != tt.want {
				t.Errorf("errorLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitMemory(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name  string
		total int64
		share decodeShare
		want  memorySplit
	}{
		{"default: half each", 0, decodeShare{}, memorySplit{prefetch: iosched.DefaultMemory / 2, admit: true, decode: iosched.DefaultMemory / 2}},
		{"half of 2 GiB", 2 * gib, decodeShare{}, memorySplit{prefetch: gib, admit: true, decode: gib}},
		{"explicit share", 2 * gib, decodeShare{bytes: gib / 2}, memorySplit{prefetch: 3 * gib / 2, admit: true, decode: gib / 2}},
		{"share at most 7/8", 8 * gib, decodeShare{bytes: 8 * gib}, memorySplit{prefetch: gib, admit: true, decode: 7 * gib}},
		{"no admission: all prefetch", 2 * gib, decodeShare{off: true, bytes: gib}, memorySplit{prefetch: 2 * gib}},
		{"too small to share", 1, decodeShare{}, memorySplit{prefetch: 1}},
	} {
		if got := splitMemory(tc.total, tc.share); got != tc.want {
			t.Errorf("%s: splitMemory(%d, %+v) = %+v, want %+v", tc.name, tc.total, tc.share, got, tc.want)
		}
	}
}

// serve --help lists the benchmark flags apart, and every flag once.
func TestServeHelpGroupsBenchFlags(t *testing.T) {
	e, _, stderr := testEnv(nil)
	if _, err := parseServe([]string{"--help"}, e); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	out := stderr.String()
	bench := strings.Index(out, "Benchmark flags")
	if bench < 0 {
		t.Fatalf("no benchmark group:\n%s", out)
	}
	at := func(name string) int {
		for _, end := range []string{" ", "\n"} {
			if i := strings.Index(out, "\n  -"+name+end); i >= 0 {
				return i
			}
		}
		return -1
	}
	for name := range benchFlags {
		if at(name) < bench {
			t.Errorf("-%s is not in the benchmark group:\n%s", name, out)
		}
	}
	for _, name := range []string{"io-memory", "root", "local-read", "s3-endpoint"} {
		if i := at(name); i < 0 || i > bench {
			t.Errorf("-%s missing or listed as a benchmark flag", name)
		}
	}
}

func TestMetricsMuxServesPprofOnlyWhenAsked(t *testing.T) {
	reg := prometheus.NewRegistry()
	for _, tc := range []struct {
		pprof bool
		want  int
	}{{false, http.StatusNotFound}, {true, http.StatusOK}} {
		rec := httptest.NewRecorder()
		metricsMux(reg, tc.pprof).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if rec.Code != tc.want {
			t.Errorf("pprof=%v: GET /debug/pprof/ = %d, want %d", tc.pprof, rec.Code, tc.want)
		}
		rec = httptest.NewRecorder()
		metricsMux(reg, tc.pprof).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Errorf("pprof=%v: GET /metrics = %d", tc.pprof, rec.Code)
		}
	}
}

func TestPprofNeedsMetricsListen(t *testing.T) {
	e := env{stderr: &bytes.Buffer{}, getenv: func(string) (string, bool) { return "", false }}
	if _, err := parseServe([]string{"--pprof"}, e); err == nil {
		t.Fatal("--pprof without --metrics-listen was accepted")
	}
}

// With S3 configured, the planning and IO settings left unset take the
// object store's values; those given stay.
func TestObjectStoreDefaults(t *testing.T) {
	tests := []struct {
		args                     []string
		io, footers, filesAheadN int
	}{
		{nil, iosched.DefaultConcurrency, 0, 0},
		{[]string{"--s3-endpoint", "http://127.0.0.1:9000"}, s3IOConcurrency, s3FooterConcurrency, s3FilesAhead},
		{[]string{"--s3-endpoint", "http://127.0.0.1:9000", "--io-concurrency", "4", "--footer-concurrency", "2", "--files-ahead", "-1"}, 4, 2, -1},
	}
	for _, tt := range tests {
		e, _, _ := testEnv(nil)
		f, err := parseServe(tt.args, e)
		if err != nil {
			t.Fatal(err)
		}
		if f.io.Concurrency != tt.io || f.footerConcurrency != tt.footers || f.filesAhead != tt.filesAheadN {
			t.Errorf("%v: io %d footers %d files ahead %d, want %d %d %d", tt.args,
				f.io.Concurrency, f.footerConcurrency, f.filesAhead, tt.io, tt.footers, tt.filesAheadN)
		}
	}
}
