package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server"
)

// defaultListen is where serve and demo listen unless told otherwise:
// loopback only, since scand has no TLS or authentication yet.
const defaultListen = "127.0.0.1:8815"

// stopGrace is how long a stop waits for running streams before cutting
// them off. Kubernetes' default termination grace period is 30 s; 10 s
// leaves room for the rest of the pod's shutdown.
const stopGrace = 10 * time.Second

type serveFlags struct {
	listen     string
	root       string
	splitBytes byteSize
	io         iosched.Options
}

func parseServe(args []string, e env) (serveFlags, error) {
	f := serveFlags{
		io: iosched.Options{
			TailSize:       iosched.DefaultTailSize,
			MaxRequest:     iosched.DefaultMaxRequest,
			Tolerance:      iosched.DefaultTolerance,
			Concurrency:    iosched.DefaultConcurrency,
			Memory:         iosched.DefaultMemory,
			Window:         iosched.DefaultWindow,
			MetaCacheBytes: iosched.DefaultMetaCacheBytes,
		},
	}
	fs := newFlagSet("serve", "[flags]", e)
	fs.StringVar(&f.listen, "listen", defaultListen, "address to listen on, host:port (port 0 picks a free port)")
	fs.StringVar(&f.root, "root", ".", "local directory to serve; request paths are relative to it")
	fs.Var(&f.splitBytes, "split-bytes", "target compressed `size` per endpoint, e.g. 64MiB (0 = server default, 64MiB)")
	// IO scheduler settings (iosched.Options); sizes take units (64MiB,
	// 1GiB), and 0 means iosched's default.
	fs.IntVar(&f.io.Concurrency, "io-concurrency", f.io.Concurrency, "number `n` of storage requests in flight across all scans")
	fs.Var((*byteSize)(&f.io.Memory), "io-memory", "`size` of prefetched, not yet decoded bytes across all scans")
	fs.Var((*byteSize)(&f.io.Window), "io-window", "`size` of prefetched, not yet decoded bytes per file")
	fs.Var((*byteSize)(&f.io.MaxRequest), "io-max-request", "`size` of the largest merged storage request; bigger ranges are fetched in parallel parts")
	fs.Var((*byteSize)(&f.io.Hole), "io-hole", "`size` of the largest gap read through to merge two ranges (0 = learn it from measured latency and bandwidth)")
	fs.Float64Var(&f.io.Tolerance, "io-tolerance", f.io.Tolerance, "drop a merged request's gap bytes right after the fetch when they exceed this many times its needed bytes")
	fs.Var((*byteSize)(&f.io.TailSize), "io-tail-size", "`size` of the speculative read at a file's end for its footer")
	fs.BoolVar(&f.io.NoCoalesce, "io-no-coalesce", false, "one storage request per range, no merging (for benchmarks)")
	fs.Var((*byteSize)(&f.io.MetaCacheBytes), "meta-cache", "`size` of the file metadata cache")
	pos, err := parse(fs, args, e)
	if err != nil {
		return f, err
	}
	if len(pos) > 0 {
		return f, usageErr(fs, "unexpected argument %q", pos[0])
	}
	switch {
	case f.io.Concurrency < 1:
		return f, usageErr(fs, "--io-concurrency must be at least 1")
	case f.io.Tolerance < 0:
		return f, usageErr(fs, "--io-tolerance must not be negative")
	}
	f.listen = strings.TrimPrefix(strings.TrimPrefix(f.listen, "grpc://"), "grpc+tcp://")
	return f, nil
}

func runServe(ctx context.Context, args []string, e env) error {
	f, err := parseServe(args, e)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(f.root)
	if err != nil {
		return fmt.Errorf("--root %s: %w", f.root, err)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	srv, err := server.New(server.Config{Root: root, Version: version, SplitBytes: int64(f.splitBytes), IO: f.io, Logger: log})
	if err != nil {
		return fmt.Errorf("serve %s: %w", root, err)
	}
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	log.Info(fmt.Sprintf("scand serving root=%s on grpc://%s", root, lis.Addr()), "version", version)
	return startServing(srv, lis).wait(ctx, log)
}
