package main

import (
	"context"
	"fmt"
	"github.com/scand/scand/bench/internal/s3bench"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/scand/scand/client"
	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/s3"
)

// profileQuery runs q against an in-process scand server wired like
// `scand serve` with its defaults (S3 through the counting proxy; with
// noCache the metadata cache holds nothing, as --meta-cache 1), for about
// d after one untimed run, under a CPU profile of this process (server and
// Go client), and returns `go tool pprof -top` of it: the hint a missed
// target comes with. The profile file stays in dir.
func profileQuery(ctx context.Context, dir, endpoint string, q *query, noCache bool, d time.Duration) (string, error) {
	lb, err := local.New(dir)
	if err != nil {
		return "", err
	}
	b, err := s3.New(ctx, s3.Config{Endpoint: endpoint, PathStyle: true, Region: s3bench.Region, AccessKey: s3bench.AccessKey, SecretKey: s3bench.SecretKey})
	if err != nil {
		return "", err
	}
	mux := &storage.Mux{Default: lb}
	mux.Handle(s3.Scheme, b)
	// scand serve's defaults: --io-memory split half for prefetch, half
	// for admission (cmd/scand/wiring.go).
	opts := iosched.Options{Memory: iosched.DefaultMemory / 2}
	if noCache {
		opts.MetaCacheBytes = 1
	}
	srv, err := server.New(server.Config{
		Bucket:    mux,
		Scheduler: iosched.New(mux, opts),
		Admission: admission.New(iosched.DefaultMemory/2, admission.DefaultStuckAfter),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return "", err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go srv.Serve(lis)
	defer srv.Stop()
	c, err := client.Dial(ctx, "grpc://"+lis.Addr().String())
	if err != nil {
		return "", err
	}
	defer c.Close()
	e := &scandEngine{name: "in-process", c: c}
	if r := e.run(ctx, q); r.err != nil {
		return "", r.err
	}
	name := filepath.Join(dir, "cpu-"+strings.NewReplacer(" ", "-", "%", "pct").Replace(q.Name)+".pprof")
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return "", err
	}
	start, n := time.Now(), 0
	var wall, plan time.Duration
	var st client.Stats
	for time.Since(start) < d || n == 0 {
		r := e.run(ctx, q)
		if r.err != nil {
			pprof.StopCPUProfile()
			return "", r.err
		}
		n++
		wall += r.wall
		plan += r.plan
		st.Add(r.stats)
	}
	pprof.StopCPUProfile()
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=12", "-symbolize=none", name).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, out)
	}
	// scand's own frames by cumulative time: where the filter, the decoder
	// and the send path spend it.
	own, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=15", "-symbolize=none",
		"-show=scand/scand", name).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, own)
	}
	var kept []string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "File:") && !strings.HasPrefix(line, "Build ID:") && !strings.HasPrefix(line, "Type:") && !strings.HasPrefix(line, "Time:") {
			kept = append(kept, line)
		}
	}
	out = append([]byte(strings.Join(kept, "\n")), pprofRows(own)...)
	head := fmt.Sprintf("%d runs, mean wall %.3f s, of which GetFlightInfo %.3f s; per run the streams waited %.3f s on storage of %.3f s stream time (summed over streams), %d GETs, %d endpoints\n",
		n, wall.Seconds()/float64(n), plan.Seconds()/float64(n), st.IOSeconds/float64(n), st.ElapsedSeconds/float64(n), st.Reads/int64(n), st.Endpoints/n)
	return head + string(out), nil
}

// pprofRows keeps the table rows of a pprof -top output (drops its header).
func pprofRows(out []byte) []byte {
	var b strings.Builder
	b.WriteString("  scand's frames (-cum, -show=scand/scand):\n")
	rows := false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "flat%") {
			rows = true
		}
		if rows && strings.TrimSpace(line) != "" {
			b.WriteString(line + "\n")
		}
	}
	return []byte(b.String())
}
