package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/server"
	"github.com/scand/scand/server/cluster"
	"github.com/scand/scand/source/iceberg/catalogs"
	"github.com/scand/scand/storage/azure"
	"github.com/scand/scand/storage/gcs"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/s3"
	"github.com/scand/scand/wire"
)

// defaultListen is where serve and demo listen unless told otherwise:
// loopback only: elsewhere serve wants TLS and authentication (see
// checkSecurity).
const defaultListen = "127.0.0.1:8815"

type serveFlags struct {
	listen        string
	root          string
	splitBytes    byteSize
	maxIndexBytes byteSize
	lateMat       scanner.LateMode
	io            iosched.Options // Memory: all of --io-memory (see splitMemory)
	decode        decodeShare
	planMemory    byteSize // --io-plan-memory; 0 = planShare's default
	metricsListen string
	pprof         bool
	sendPath      wire.SendPath
	localRead     local.ReadMode
	compression   wire.Compression
	s3            *s3.Config    // nil: S3 not configured
	gcs           *gcs.Config   // nil: Google Cloud Storage not configured (clouds.go)
	azure         *azure.Config // nil: Azure Blob Storage not configured
	cache         cacheFlags
	security      securityFlags
	memoryLimit   byteSize
	planTimeout   time.Duration
	// footerConcurrency and filesAhead are server.Planning's; 0 = auto
	// (objectStoreDefaults).
	footerConcurrency int
	filesAhead        int
	limits            server.Limits
	decodePar         int // --decode-parallelism
	logs              logFlags
	cluster           clusterFlags
	audit             *slog.Logger        // not a flag: built from logs by runServe
	grpcOptions       []grpc.ServerOption // not a flag: tracing's, from OTEL_* (tracing.go)
	ring              func() cluster.Ring // not a flag: the membership runServe starts
	// catalogs are --catalog's Iceberg catalogs (catalogs.go), their
	// credentials read from the process's environment when opened.
	catalogs []catalogs.Spec
}

// benchFlags exist to compare implementations in bench/ and e2e; --help
// lists them apart.
var benchFlags = map[string]bool{"send-path": true, "io-no-coalesce": true, "io-no-admission": true}

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
	var s3cfg s3.Config
	var clouds cloudConfigs
	fs := newFlagSet("serve", "[flags]", e)
	fs.Usage = groupedUsage(fs, "serve", "[flags]", e, benchFlags,
		"Benchmark flags (compare implementations; leave them unset in production)")
	defineServeFlags(fs, &f)
	defineIOFlags(fs, &f)
	defineS3Flags(fs, &s3cfg)
	defineCloudFlags(fs, &clouds)
	defineCacheFlags(fs, &f.cache)
	defineSecurityFlags(fs, &f.security)
	defineClusterFlags(fs, &f.cluster)
	var catalogFlags stringList
	defineCatalogFlags(fs, &catalogFlags)
	pos, err := parse(fs, args, e)
	if err != nil {
		return f, err
	}
	if f.catalogs, err = parseCatalogs(catalogFlags); err != nil {
		return f, usageErr(fs, "%v", err)
	}
	if len(pos) > 0 {
		return f, usageErr(fs, "unexpected argument %q", pos[0])
	}
	switch {
	case f.io.Concurrency < 1:
		return f, usageErr(fs, "--io-concurrency must be at least 1")
	case f.footerConcurrency < 0:
		return f, usageErr(fs, "--footer-concurrency must not be negative")
	case f.io.Tolerance < 0:
		return f, usageErr(fs, "--io-tolerance must not be negative")
	case f.decodePar < 0:
		return f, usageErr(fs, "--decode-parallelism must not be negative (0 = GOMAXPROCS, 1 = off)")
	}
	if err := f.cluster.check(f.security); err != nil {
		return f, usageErr(fs, "%v", err)
	}
	// S3 is on only when asked for: any --s3-* flag (or its SCAND_S3_*
	// variable, which sets the flag). An AWS region in the environment
	// alone no longer turns it on, so a server on EC2 does not serve the
	// instance role's buckets unasked.
	fs.Visit(func(fl *flag.Flag) {
		if strings.HasPrefix(fl.Name, "s3-") {
			f.s3 = &s3cfg
		}
	})
	if f.pprof && f.metricsListen == "" {
		return f, usageErr(fs, "--pprof serves on --metrics-listen, which is not set")
	}
	enableClouds(fs, e, &clouds, &f)
	if f.s3 != nil || f.gcs != nil || f.azure != nil {
		objectStoreDefaults(fs, &f)
	}
	f.listen = listenAddr(f.listen)
	if f.metricsListen != "" {
		f.metricsListen = listenAddr(f.metricsListen)
	}
	return f, nil
}

// With an object store (S3, GCS, Azure) configured, the settings left
// unset suit an object store:
// latency-bound, so more requests in flight. A footer or a small file
// costs a round trip (tens of ms), not bandwidth: 500 footers read 8 at a
// time take 60 round trips, 64 at a time 8. Local reads are bounded by
// the same --io-concurrency, so local scans on the same server are not
// flooded beyond it.
const (
	s3IOConcurrency     = 64
	s3FooterConcurrency = 64
	s3FilesAhead        = 16
)

// objectStoreDefaults applies the S3 settings to the flags not given.
func objectStoreDefaults(fs *flag.FlagSet, f *serveFlags) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["io-concurrency"] {
		f.io.Concurrency = max(f.io.Concurrency, s3IOConcurrency)
	}
	if f.footerConcurrency == 0 {
		f.footerConcurrency = s3FooterConcurrency
	}
	if f.filesAhead == 0 {
		f.filesAhead = s3FilesAhead
	}
}

func defineServeFlags(fs *flag.FlagSet, f *serveFlags) {
	fs.StringVar(&f.listen, "listen", defaultListen, "address to listen on, host:port, or a port alone for 127.0.0.1:port (port 0 picks a free port)")
	fs.StringVar(&f.root, "root", ".", "local directory to serve; request paths are relative to it")
	fs.Var(&f.maxIndexBytes, "page-index-max-bytes", "cap on the Parquet page index `size` one stream reads to choose pages (0 = default, 32MiB; 1B reads none; an index over half the data it gates is never read)")
	fs.Var(typedFlag(&f.lateMat, scanner.ParseLateMode), "late-materialization", "`mode` of filtered Parquet reads: auto decodes the filter's columns first and fetches the others' pages only where rows survive, while that pays; off reads every column at once; always reads late wherever the page index allows")
	fs.Var(&f.splitBytes, "split-bytes", fmt.Sprintf("target compressed `size` per endpoint, e.g. 64MiB (0 = server default, %s)", byteSizeString(server.DefaultSplitBytes)))
	fs.StringVar(&f.metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://`host:port`/metrics, or a port alone for 127.0.0.1:port (off when empty)")
	fs.BoolVar(&f.pprof, "pprof", false, "also serve Go's profiles (net/http/pprof) at /debug/pprof/ on --metrics-listen; for diagnosing CPU and memory, keep that address private")
	fs.Var(typedFlag(&f.sendPath, wire.ParseSendPath), "send-path", "`path` by which batches go to the socket: zerocopy or stock (arrow-go's writer, for comparison)")
	fs.Var(typedFlag(&f.localRead, local.ParseReadMode), "local-read", "`mode` of reading local files: pread, or mmap (map each file read-only and copy from the mapping; for files not modified in place while served)")
	fs.Var(typedFlag(&f.compression, wire.ParseCompression), "compression", "default IPC body compression `codec` when a request names none: lz4 or zstd (empty = none)")
	fs.IntVar(&f.footerConcurrency, "footer-concurrency", 0, fmt.Sprintf("footers `n` one request reads at once while planning (0 = %d, %d with S3 configured)", server.DefaultFooterConcurrency, s3FooterConcurrency))
	fs.IntVar(&f.filesAhead, "files-ahead", 0, fmt.Sprintf("files `n` of a packed endpoint opened and fetched while the stream decodes the current one (0 = %d, %d with S3 configured; -1 = none)", server.DefaultFilesAhead, s3FilesAhead))
	fs.DurationVar(&f.planTimeout, "plan-timeout", server.DefaultPlanTimeout, "longest a GetFlightInfo or GetSchema may take (listing, footers) before it fails with DEADLINE_EXCEEDED")
	fs.DurationVar(&f.limits.StreamIdleTimeout, "stream-idle-timeout", server.DefaultStreamIdleTimeout, "end a DoGet stream whose client has read nothing for this long (DEADLINE_EXCEEDED)")
	fs.IntVar(&f.decodePar, "decode-parallelism", 0, "goroutines one stream may decode with: a batch's columns at once, and the next batch while the last is sent; the helpers are shared by all streams (0 = GOMAXPROCS, 1 = off: one goroutine, no read-ahead)")
	fs.IntVar(&f.limits.MaxStreamsPerPeer, "max-streams-per-peer", server.DefaultMaxStreamsPerPeer, "DoGet streams one client address may run at once; more are RESOURCE_EXHAUSTED")
	fs.DurationVar(&f.limits.FirstCallTimeout, "conn-first-call-timeout", server.DefaultFirstCallTimeout, "close a connection that has not finished its handshake (TLS, HTTP/2 preface) and started its first call this long after it was accepted")
	fs.DurationVar(&f.limits.ConnIdleTimeout, "conn-idle-timeout", server.DefaultConnIdleTimeout, "close a connection without calls for this long (GOAWAY; clients reconnect when they next call)")
	fs.IntVar(&f.limits.MaxConnsPerPeer, "max-conns-per-peer", server.DefaultMaxConnsPerPeer, "connections one client address may hold at once; more are refused when they connect")
	defineLogFlags(fs, &f.logs)
	fs.Var(&f.memoryLimit, "go-memory-limit", "Go runtime soft memory `size` limit (0 = --io-memory + 64MiB; the GOMEMLIMIT environment variable wins)")
}

// defineIOFlags defines the IO scheduler's settings (iosched.Options) and
// the decode share; sizes take units (64MiB, 1GiB), and 0 means the
// default.
func defineIOFlags(fs *flag.FlagSet, f *serveFlags) {
	fs.IntVar(&f.io.Concurrency, "io-concurrency", f.io.Concurrency, fmt.Sprintf("number `n` of storage requests in flight across all scans (%d when unset with S3 configured)", s3IOConcurrency))
	fs.Var((*byteSize)(&f.io.Memory), "io-memory", "`size` of memory scans may hold across the server: prefetched bytes and decoding streams' working memory")
	fs.Var((*byteSize)(&f.decode.bytes), "io-decode-memory", "`size` of --io-memory set aside for decoding streams; streams wait for it before decoding (0 = half of --io-memory, at most 7/8 of it)")
	fs.Var(&f.planMemory, "io-plan-memory", "`size` of --io-memory set aside for planning (the footers GetFlightInfo decodes, what plans keep); plans wait for it, or are refused when it is full (0 = 1/8 of --io-memory, at most half of what prefetching would keep)")
	fs.BoolVar(&f.decode.off, "io-no-admission", false, "decode every stream at once, without waiting for decode memory (--io-memory then bounds prefetched bytes only)")
	fs.Var((*byteSize)(&f.io.Window), "io-window", "`size` of prefetched, not yet decoded bytes per file")
	fs.Var((*byteSize)(&f.io.MaxRequest), "io-max-request", "`size` of the largest merged storage request; bigger ranges are fetched in parallel parts")
	fs.Var((*byteSize)(&f.io.Hole), "io-hole", "`size` of the largest gap read through to merge two ranges (0 = learn it from measured latency and bandwidth)")
	fs.Float64Var(&f.io.Tolerance, "io-tolerance", f.io.Tolerance, "drop a merged request's gap bytes right after the fetch when they exceed this many times its needed bytes")
	fs.Var((*byteSize)(&f.io.TailSize), "io-tail-size", "`size` of the speculative read at a file's end for its footer")
	fs.BoolVar(&f.io.NoCoalesce, "io-no-coalesce", false, "one storage request per range, no merging")
	fs.Var((*byteSize)(&f.io.MetaCacheBytes), "meta-cache", "`size` of the file metadata cache")
}

// defineS3Flags defines the S3 settings. Without keys the standard AWS
// credential chain applies (environment, shared config, web identity /
// IRSA, instance metadata). Prefer SCAND_S3_SECRET_KEY to the flag: flags
// show in ps.
func defineS3Flags(fs *flag.FlagSet, c *s3.Config) {
	fs.StringVar(&c.Endpoint, "s3-endpoint", "", "S3-compatible endpoint `URL` (empty: AWS)")
	fs.StringVar(&c.Region, "s3-region", "", "S3 `region` (default us-east-1 with --s3-endpoint)")
	fs.StringVar(&c.AccessKey, "s3-access-key", "", "static access `key` (empty: the AWS credential chain)")
	fs.StringVar(&c.SecretKey, "s3-secret-key", "", "static secret `key`")
	fs.StringVar(&c.SessionToken, "s3-session-token", "", "session `token` for temporary static credentials")
	fs.BoolVar(&c.PathStyle, "s3-path-style", false, "path-style addressing (http://host/bucket/key), for most S3-compatible stores")
	fs.IntVar(&c.MaxAttempts, "s3-max-attempts", 0, fmt.Sprintf("attempts per S3 request before giving up (0 = default, %d)", s3.DefaultMaxAttempts))
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
	log, audit := f.logs.loggers(e.stderr)
	setMemoryLimit(f, e, log)
	var reg *prometheus.Registry
	if f.metricsListen != "" {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	f.audit = audit
	tr, err := startTracing(ctx, e, f.listen, log)
	if err != nil {
		return err
	}
	defer tr.shutdown(log) // after the server stopped: its last spans are flushed
	f.grpcOptions = tr.serverOptions
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	members, err := startMembership(f, lis.Addr(), log)
	if err != nil {
		lis.Close()
		return err
	}
	if members != nil {
		defer members.Close()
		f.ring = members.Ring
	}
	srv, err := newServer(ctx, f, root, log, registerer(reg))
	if err != nil {
		lis.Close()
		return fmt.Errorf("serve %s: %w", root, err)
	}
	if reg != nil {
		stop, err := serveMetrics(reg, f.metricsListen, f.pprof, log)
		if err != nil {
			lis.Close()
			return err
		}
		defer stop()
	}
	logServing(f, root, lis.Addr(), log)
	r := startServing(srv, lis)
	r.grace, r.members = f.cluster.drainTimeout, members
	return r.wait(ctx, log)
}

// logServing logs the line that says serve is up (tests and the k8s
// check wait for it).
func logServing(f serveFlags, root string, addr net.Addr, log *slog.Logger) {
	scheme := "grpc"
	if f.security.tlsCert != "" {
		scheme = "grpc+tls"
	}
	log.Info(fmt.Sprintf("scand serving root=%s on %s://%s", root, scheme, addr), "version", version, "s3", f.s3 != nil, "gcs", f.gcs != nil, "azure", f.azure != nil,
		"auth", cmp.Or(f.security.authMode, "none"))
}

// registerer avoids a typed nil: a nil *Registry is not a nil Registerer.
func registerer(reg *prometheus.Registry) prometheus.Registerer {
	if reg == nil {
		return nil
	}
	return reg
}

// serveMetrics serves reg at http://addr/metrics until stop is called,
// and with withPprof Go's profiles at /debug/pprof/.
func serveMetrics(reg *prometheus.Registry, addr string, withPprof bool, log *slog.Logger) (stop func() error, err error) {
	mlis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	mux := metricsMux(reg, withPprof)
	msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go msrv.Serve(mlis)
	log.Info(fmt.Sprintf("metrics on http://%s/metrics", mlis.Addr()))
	return msrv.Close, nil
}

// metricsMux routes /metrics and, when asked for, the pprof handlers.
// (net/http/pprof's init also registers them on http.DefaultServeMux,
// which scand never serves; only this mux exposes them.)
func metricsMux(reg *prometheus.Registry, withPprof bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// memoryLimitSlack is what the Go runtime may use beyond the scans' memory
// budget: the metadata cache, gRPC buffers, goroutine stacks, plans, and
// garbage not yet collected.
const memoryLimitSlack = 64 << 20

// setMemoryLimit gives the Go runtime a soft limit just above what scans
// may hold, so that garbage is collected before the heap doubles (the
// default GOGC=100 lets a server with a 1 GiB budget grow to 2 GiB and
// more). The budget and admission keep live memory under the limit; the
// limit keeps dead memory from piling up on top.
func setMemoryLimit(f serveFlags, e env, log *slog.Logger) {
	if v, ok := e.getenv("GOMEMLIMIT"); ok && v != "" {
		log.Info("Go memory limit from GOMEMLIMIT", "limit", v)
		return
	}
	limit := int64(f.memoryLimit)
	if limit == 0 {
		limit = cmp.Or(max(f.io.Memory, 0), iosched.DefaultMemory) + memoryLimitSlack
	}
	debug.SetMemoryLimit(limit)
	log.Info("Go memory limit", "bytes", limit)
}
