package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/planner"
	"github.com/scand/scand/planner/planmem"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/orc"
	"github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/server/admission"
	"github.com/scand/scand/server/cluster"
	"github.com/scand/scand/server/flightsql"
	"github.com/scand/scand/server/limits"
	"github.com/scand/scand/server/stream"
	"github.com/scand/scand/source"
	"github.com/scand/scand/source/delta"
	"github.com/scand/scand/source/files"
	"github.com/scand/scand/source/iceberg"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/wire"
)

// DefaultSplitBytes is the target of projected, compressed bytes per
// endpoint (planner.DefaultSplitBytes).
const DefaultSplitBytes = planner.DefaultSplitBytes

// DefaultFooterConcurrency bounds how many footers one request reads at
// once when Planning.FooterConcurrency is 0
// (planner.DefaultFooterConcurrency).
const DefaultFooterConcurrency = planner.DefaultFooterConcurrency

// Config configures a Server. The server builds nothing that touches a
// store itself: cmd/scand wires the bucket (local root, S3, their metrics),
// the scheduler over it and the admission controller, and passes them in.
type Config struct {
	// Bucket serves every name a request uses. Required.
	Bucket storage.Bucket
	// Scheduler reads files from Bucket; nil means iosched.New(Bucket,
	// iosched.Options{}).
	Scheduler *iosched.Scheduler
	// Admission bounds the decoding streams' working memory; nil means no
	// admission control (every stream decodes at once).
	Admission *admission.Controller
	// PlanMemory is the planning share of --io-memory: the footers
	// GetFlightInfo and GetSchema decode and what plans keep are charged
	// to it (planner.Config.PlanMemory); nil means planning is not charged.
	PlanMemory *planmem.Budget
	// Mem allocates decoded Arrow data; nil = memory.DefaultAllocator.
	Mem memory.Allocator
	// Logger receives one line per scan and every internal error.
	Logger *slog.Logger
	// Audit, when set, receives one line (at LevelAudit) per GetFlightInfo
	// and per DoGet: identity, paths or file, rows, bytes, status.
	Audit *slog.Logger
	// Planning tunes how GetFlightInfo splits scans.
	Planning Planning
	// Version is reported by the "version" action.
	Version string
	// Metrics, when set, receives the server's Prometheus metrics.
	Metrics prometheus.Registerer
	// SendPath is how DoGet writes batches (see sendpath.go).
	SendPath wire.SendPath
	// Compression compresses IPC bodies of requests that name none.
	Compression wire.Compression
	// Limits bound what one client can hold.
	Limits Limits
	// DecodeParallelism is cmd/scand's --decode-parallelism: 1 turns off
	// read-ahead (readahead.go), any other value keeps it on. The column
	// helpers' pool it also sizes is the Parquet reader's, process-wide
	// (parquet.SetDecodeParallelism), which cmd/scand sets.
	DecodeParallelism int
	// Security is TLS, authentication, ticket signing, scopes and limits
	// (security.go); the zero value is plaintext and anonymous, with signed
	// tickets.
	Security Security
	// ServerOptions are added to the gRPC server's own: cmd/scand passes
	// otelgrpc's stats handler here when tracing is on (tracing.go).
	ServerOptions []grpc.ServerOption
	// Catalogs are the Iceberg catalogs a request's table may name
	// ("catalog.namespace.table"; catalogs.go); ListFlights lists their
	// tables. Nil: tables are named by location or metadata file only.
	Catalogs iceberg.Catalogs
	// Ring, when set, returns the current ring of replicas
	// (cluster.Membership.Ring): every endpoint then lists its owner and
	// runner-up as locations. Nil: endpoints carry no location, and a
	// client reads each from the server that planned it.
	Ring func() cluster.Ring
}

// Planning tunes how scans are cut into endpoints.
type Planning struct {
	// SplitBytes is the target of projected, compressed bytes per
	// endpoint when a request names none; 0 = DefaultSplitBytes.
	SplitBytes int64
	// Timeout bounds one GetFlightInfo or GetSchema (listing, footers);
	// 0 = DefaultPlanTimeout.
	Timeout time.Duration
	// MaxIndexBytes caps the page index bytes one stream reads to decide
	// which pages to fetch (scanner.ReadOptions.MaxIndexBytes); 0 = the
	// reader's default, negative = no page index.
	MaxIndexBytes int64
	// LateMaterialization is scanner.ReadOptions.LateMaterialization
	// for every stream (the zero value: auto).
	LateMaterialization scanner.LateMode
	// FooterConcurrency bounds the footers one request reads at once
	// while planning; 0 = DefaultFooterConcurrency. Storage requests in
	// flight are bounded apart, by iosched.Options.Concurrency.
	FooterConcurrency int
	// FilesAhead is how many files of a packed endpoint (multifile.go) a
	// stream opens and starts fetching while it decodes the current one;
	// 0 = DefaultFilesAhead, negative = none.
	FilesAhead int
}

// Defaults of Limits and Planning.
const (
	DefaultPlanTimeout       = 2 * time.Minute
	DefaultStreamIdleTimeout = 5 * time.Minute
	DefaultMaxStreamsPerPeer = 128
)

// Limits protect the server from clients that hold streams without
// reading them.
type Limits struct {
	// StreamIdleTimeout ends a DoGet whose client has read nothing for
	// that long (a send blocked on flow control); 0 = the default.
	StreamIdleTimeout time.Duration
	// MaxStreamsPerPeer caps the DoGet streams one client address runs at
	// once; past it DoGet is RESOURCE_EXHAUSTED. 0 = the default.
	MaxStreamsPerPeer int
	// FirstCallTimeout closes a connection that has not finished its
	// handshake and started its first call this long after it was
	// accepted (conns.go); 0 = the default.
	FirstCallTimeout time.Duration
	// ConnIdleTimeout closes a connection without calls for this long
	// (GOAWAY; clients reconnect); 0 = the default.
	ConnIdleTimeout time.Duration
	// MaxConnsPerPeer caps the connections one client address holds at
	// once; past it a new one is refused at accept. 0 = the default.
	MaxConnsPerPeer int
}

// Server is the Flight service. Its methods are safe for concurrent use.
type Server struct {
	flight.BaseFlightServer

	cfg    Config
	sec    Security
	bucket storage.Bucket
	sched  *iosched.Scheduler
	admit  *admission.Controller
	mem    memory.Allocator
	log    *slog.Logger
	grpc   *grpc.Server
	health *health.Server
	// planner plans GetFlightInfo's and GetSchema's scans.
	planner *planner.Planner
	// streamCfg is what DoGet's streams take from the server (doget.go).
	streamCfg *stream.Config
	// deltaCache keeps Delta tables' snapshots between scans (tables.go).
	deltaCache *delta.Cache
	// icebergPlans keeps Iceberg snapshots' plans between scans (tables.go).
	icebergPlans *iceberg.PlanCache

	peerStreams *limits.Concurrency
	conns       *connLimiter // connection limits (conns.go)
	drain       drainState

	scans *prometheus.CounterVec // by result: ok, error, canceled
	rows  prometheus.Counter
	// sentBytes counts the Arrow data of the batches sent.
	sentBytes prometheus.Counter
	// rowsFiltered counts rows filters dropped, pruned what planning
	// skipped, by level.
	rowsFiltered prometheus.Counter
	pruned       *prometheus.CounterVec
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Bucket == nil {
		return nil, errors.New("server: Config.Bucket is required")
	}
	if cfg.Planning.SplitBytes <= 0 {
		cfg.Planning.SplitBytes = DefaultSplitBytes
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	setLimitDefaults(&cfg)
	if err := setupSecurity(&cfg.Security); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{sec: cfg.Security, peerStreams: limits.NewConcurrency("concurrent DoGet streams per client address (--max-streams-per-peer)", cfg.Limits.MaxStreamsPerPeer), cfg: cfg, bucket: cfg.Bucket, sched: cfg.Scheduler, admit: cfg.Admission, mem: cfg.Mem, log: cfg.Logger}
	if s.sched == nil {
		s.sched = iosched.New(s.bucket, iosched.Options{})
	}
	s.deltaCache = delta.NewCache(deltaCacheBytes)
	s.icebergPlans = iceberg.NewPlanCache(icebergPlanFiles)
	if s.mem == nil {
		s.mem = memory.DefaultAllocator
	}
	if s.admit != nil {
		// A read that waited in vain for prefetch memory: streams stalled
		// on their clients may hold it, pinned by the messages they cannot
		// send (admission's Relieve ends the largest).
		s.sched.OnShort(s.admit.Relieve)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	var err error
	s.streamCfg = s.streamConfig()
	if s.planner, err = planner.New(s.plannerConfig()); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cfg.Metrics != nil {
		s.registerMetrics(cfg.Metrics)
	}
	s.conns = newConnLimiter(cfg.Limits, cfg.Security.TLS != nil, s.log)
	if cfg.Metrics != nil {
		s.conns.register(cfg.Metrics)
		registerPlanMemory(cfg.Metrics, cfg.PlanMemory)
	}
	opts := append(securityOptions(cfg.Security), stream.SendServerOptions()...)
	opts = append(opts, s.conns.serverOptions(cfg.Limits)...)
	opts = append(opts, s.drain.serverOptions()...)
	s.grpc = grpc.NewServer(append(opts, cfg.ServerOptions...)...)
	front, err := flightsql.New(flightsql.Config{Backend: flightsql.FlightBackend{Service: s, Mem: s.mem, Count: s.PlanCount, Extremes: s.PlanExtremes, IsTable: s.IsTable}, Version: cfg.Version, Mem: s.mem})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	// Flight SQL commands go to the front door, which plans and streams
	// through s; everything else is s's own (server/flightsql.Mux).
	flight.RegisterFlightServiceServer(s.grpc, &flightsql.Mux{Scand: s, SQL: front.FlightService()})
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	return s, nil
}

func setLimitDefaults(cfg *Config) {
	if cfg.Planning.Timeout <= 0 {
		cfg.Planning.Timeout = DefaultPlanTimeout
	}
	if cfg.Limits.StreamIdleTimeout <= 0 {
		cfg.Limits.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if cfg.Limits.MaxStreamsPerPeer <= 0 {
		cfg.Limits.MaxStreamsPerPeer = DefaultMaxStreamsPerPeer
	}
	if cfg.Limits.FirstCallTimeout <= 0 {
		cfg.Limits.FirstCallTimeout = DefaultFirstCallTimeout
	}
	if cfg.Limits.ConnIdleTimeout <= 0 {
		cfg.Limits.ConnIdleTimeout = DefaultConnIdleTimeout
	}
	if cfg.Limits.MaxConnsPerPeer <= 0 {
		cfg.Limits.MaxConnsPerPeer = DefaultMaxConnsPerPeer
	}
}

// Serve accepts connections on lis until GracefulStop or Stop; it returns
// nil after either.
func (s *Server) Serve(lis net.Listener) error {
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	err := s.grpc.Serve(s.conns.listener(lis))
	if err == grpc.ErrServerStopped {
		return nil
	}
	return err
}

// Drain begins a graceful stop and returns at once: health turns
// NOT_SERVING (and stays so), so that peers drop this replica from their
// ring and probes take it out of the Service, and every new call that
// starts work (GetFlightInfo, GetSchema, DoGet, ListFlights) is refused
// with UNAVAILABLE, so that clients go to another location. Running
// streams continue; Shutdown waits for them.
func (s *Server) Drain() {
	if s.drain.start() {
		s.health.Shutdown()
		s.log.Info("draining: health NOT_SERVING, new scans refused", "running_streams", s.drain.streams.Load())
	}
}

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.drain.draining.Load() }

// drainPoll is how often Shutdown looks whether the streams have ended.
const drainPoll = 20 * time.Millisecond

// Shutdown drains (see Drain), waits up to grace for the running DoGet
// streams to end, then stops the server: at once once they have, and by
// cutting off those left when grace runs out (their clients see
// UNAVAILABLE and resume elsewhere). It returns the number of streams it
// cut off, and once Serve has been told to return.
func (s *Server) Shutdown(grace time.Duration) (cut int64) {
	s.Drain()
	deadline := time.Now().Add(grace)
	for s.drain.streams.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(drainPoll)
	}
	if cut = s.drain.streams.Load(); cut > 0 {
		s.log.Warn("drain timeout: cutting off the streams still running", "streams", cut, "grace", grace)
		s.Stop()
		return cut
	}
	// No stream is left; unary calls in flight still get the rest of grace
	// (and a second at least).
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(max(time.Until(deadline), time.Second)):
		s.grpc.Stop()
		<-stopped
	}
	return 0
}

// GracefulStop stops accepting streams and waits for running ones to end.
func (s *Server) GracefulStop() {
	s.health.Shutdown()
	s.grpc.GracefulStop()
}

// Stop ends every stream at once.
func (s *Server) Stop() {
	s.health.Shutdown()
	s.grpc.Stop()
}

// GRPC exposes the underlying gRPC server, so callers can register more
// services beside Flight.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// plannerConfig wires the planner to the server: a request's paths are a
// files source under the caller's scope, files open through the IO
// scheduler (checked again against the scope), bloom filters read without
// a planning share are charged to admission.
func (s *Server) plannerConfig() planner.Config {
	cfg := planner.Config{
		Resolve: func(ctx context.Context, req *scandv1.ScanRequest) (source.Source, error) {
			if req.Table != "" {
				return s.tableSource(ctx, req) // tables.go
			}
			return files.New(s.bucket, req.Paths, s.callerOf(ctx)), nil
		},
		Open: func(ctx context.Context, info storage.Info) (*planner.Opened, error) {
			o, err := s.open(ctx, info)
			if err != nil {
				return nil, err
			}
			return &planner.Opened{File: o.File, Info: o.IO.Info(), Close: o.Close}, nil
		},
		Hole:                s.sched.Hole,
		PlanMemory:          s.cfg.PlanMemory,
		Mem:                 s.mem,
		Log:                 s.log,
		SplitBytes:          s.cfg.Planning.SplitBytes,
		Timeout:             s.cfg.Planning.Timeout,
		FooterConcurrency:   s.cfg.Planning.FooterConcurrency,
		MaxIndexBytes:       s.cfg.Planning.MaxIndexBytes,
		LateMaterialization: s.cfg.Planning.LateMaterialization,
	}
	if s.admit != nil {
		cfg.Admit = func(ctx context.Context) (scanner.Reserver, func(), error) {
			g, err := s.admit.Admit(ctx, 0)
			if err != nil || g == nil {
				return nil, nil, err
			}
			return g, g.Close, nil
		}
	}
	return cfg
}

// open opens a file through the IO scheduler and the reader for its
// format. Decoder errors caused by a failing store are reported as the
// store's error.
func (s *Server) open(ctx context.Context, info storage.Info) (*stream.Opened, error) {
	f, err := s.sched.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	// What was opened, not what was planned: a link may lead elsewhere now.
	if err := s.callerOf(ctx).CheckFile(f.Info()); err != nil {
		f.Close()
		return nil, err
	}
	o, err := s.openFooter(ctx, f)
	if err != nil {
		if serr := f.Err(); serr != nil {
			err = serr
		}
		err = stream.ChangedCause(f, err)
		f.Close()
		return nil, err
	}
	return o, nil
}

func (s *Server) openFormat(ctx context.Context, f *iosched.File) (_ *stream.Opened, err error) {
	name := f.Info().Name
	defer scanner.Recover(&err, name+": detecting format")
	format, err := scanner.Detect(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	switch format {
	case scanner.FormatParquet:
		pf, err := parquet.Open(ctx, name, f, s.mem)
		if err != nil {
			return nil, err
		}
		return &stream.Opened{IO: f, File: pf, Done: pf.Close}, nil
	case scanner.FormatORC:
		of, err := orc.Open(ctx, name, f, s.mem)
		if err != nil {
			return nil, err
		}
		return &stream.Opened{IO: f, File: of, Done: of.Close}, nil
	}
	return nil, fmt.Errorf("%s: %w", name, scanner.ErrNotColumnar)
}

// ListFlights lists the Parquet and ORC files under the root whose path
// starts with the criteria's expression (a path prefix; empty lists
// everything), without the names a scan of that prefix skips (a segment
// starting with "." or "_"), the names outside the caller's scope, and
// files that are not scannable (see scannable: CSV, JSON, checksums, ...).
// Each FlightInfo has a path descriptor that GetFlightInfo accepts as is,
// and the file's size as total_bytes. It has no schema and total_records
// is -1 (unknown): both need the file's footer, a storage read per file
// that a listing of thousands would pay for; GetFlightInfo (or GetSchema)
// of the descriptor gives them. With catalogs configured, their tables
// follow (listTables), or come alone when the criteria starts with a
// catalog's name.
func (s *Server) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) (err error) {
	defer recoverHandler(s.log, "ListFlights", &err)
	prefix := string(c.GetExpression())
	listFiles, listTables := s.listingTables(prefix) // list.go
	n := 0
	if listTables && !listFiles {
		return toStatus(s.listTables(stream.Context(), prefix, &n, stream.Send))
	}
	if canonical, err := storage.Canonical(s.bucket, prefix); err == nil {
		prefix = canonical
	}
	prefix = strings.TrimPrefix(strings.TrimPrefix(prefix, "./"), "/")
	caller := s.callerOf(stream.Context())
	err = s.bucket.List(stream.Context(), prefix, func(info storage.Info) error {
		// The names a scan of the prefix would skip, and those outside the
		// caller's scope, which look absent.
		if storage.HiddenBelow(prefix[:strings.LastIndex(prefix, "/")+1], info.Name) || !caller.AllowsFile(info) {
			return nil
		}
		if ok, err := s.scannable(stream.Context(), info); err != nil || !ok {
			return err
		}
		if n++; n > maxFiles {
			return tooLargef("more than %d files under %q; list a narrower prefix", maxFiles, prefix)
		}
		return stream.Send(&flight.FlightInfo{
			FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{info.Name}},
			TotalRecords:     -1,
			TotalBytes:       info.Size,
		})
	})
	if err == nil && listTables {
		err = s.listTables(stream.Context(), string(c.GetExpression()), &n, stream.Send)
	}
	return toStatus(err)
}

// Actions served by DoAction.
var actions = []*flight.ActionType{
	{Type: "version", Description: "Returns {\"version\": ...}, the server's version."},
	resumeActionType, // resume.go
}

// ListActions implements flight.FlightServer.
func (s *Server) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range actions {
		if err := stream.Send(a); err != nil {
			return err
		}
	}
	return nil
}

// DoAction implements flight.FlightServer.
func (s *Server) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	switch a.GetType() {
	case "version":
		body, _ := json.Marshal(map[string]string{"version": s.cfg.Version})
		return stream.Send(&flight.Result{Body: body})
	case actionResume:
		return s.doResume(a.GetBody(), stream)
	}
	return toStatus(invalidf("unknown action (this server has: version, resume): %s", quoteName(a.GetType())))
}
