package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/scanner"
	"github.com/scand/scand/scanner/orc"
	"github.com/scand/scand/scanner/parquet"
	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/local"
	"github.com/scand/scand/storage/s3"
	"github.com/scand/scand/wire"
)

// DefaultSplitBytes is the target of projected, compressed bytes per
// endpoint: large enough that per-stream overhead is noise, small enough
// that a scan of a big file spreads over several streams.
const DefaultSplitBytes = 64 << 20

// Config configures a Server.
type Config struct {
	// Root is the local directory served; request paths are relative to it.
	Root string
	// Bucket, when set, replaces the local bucket at Root (tests, S3).
	Bucket storage.Bucket
	// Version is reported by the "version" action.
	Version string
	// SplitBytes is the default target per endpoint; 0 = DefaultSplitBytes.
	SplitBytes int64
	// Mem allocates decoded Arrow data; nil = memory.DefaultAllocator.
	Mem memory.Allocator
	// Logger receives one line per scan and every internal error.
	Logger *slog.Logger
	// IO tunes the IO scheduler.
	IO iosched.Options
	// Metrics, when set, receives scand's Prometheus metrics.
	Metrics prometheus.Registerer
	// S3, when set, serves s3://bucket/key names.
	S3 *s3.Config
	// SendPath is how DoGet writes batches: wire.SendZeroCopy (the
	// default; see sendpath.go) or wire.SendStock (arrow-go's Flight
	// writer).
	SendPath wire.SendPath
	// Compression compresses IPC bodies of streams whose request names
	// none.
	Compression wire.Compression
	// LocalRead is how files under Root are read: "pread" (the default) or
	// "mmap" (mapped read-only, reads copy from the mapping; see
	// local.WithMmap). Ignored when Bucket is set.
	LocalRead string
}

// Server is the Flight service. Its methods are safe for concurrent use.
type Server struct {
	flight.BaseFlightServer

	cfg    Config
	bucket storage.Bucket
	sched  *iosched.Scheduler
	mem    memory.Allocator
	log    *slog.Logger
	grpc   *grpc.Server
	health *health.Server

	scans *prometheus.CounterVec // by result: ok, error, canceled
	rows  prometheus.Counter
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.SplitBytes <= 0 {
		cfg.SplitBytes = DefaultSplitBytes
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	bucket := cfg.Bucket
	if bucket == nil {
		root := cfg.Root
		if root == "" {
			root = "."
		}
		var lopts []local.Option
		switch cfg.LocalRead {
		case "", "pread":
		case "mmap":
			lopts = append(lopts, local.WithMmap())
		default:
			return nil, fmt.Errorf("local read mode %q: want pread or mmap", cfg.LocalRead)
		}
		lb, err := local.New(root, lopts...)
		if err != nil {
			return nil, err
		}
		var sm *storage.Metrics
		if cfg.Metrics != nil {
			sm = storage.NewMetrics(cfg.Metrics)
		}
		mux := &storage.Mux{Default: storage.WithMetrics(lb, sm, "local")}
		if cfg.S3 != nil {
			s3cfg := *cfg.S3
			if sm != nil {
				retries := sm.Retries("s3")
				observe := s3cfg.Observe
				s3cfg.Observe = func(op string, n int64, d time.Duration, err error) {
					if op == s3.OpRetry {
						retries.Inc()
					}
					if observe != nil {
						observe(op, n, d, err)
					}
				}
			}
			b, err := s3.New(context.Background(), s3cfg)
			if err != nil {
				return nil, fmt.Errorf("S3: %w", err)
			}
			mux.Handle(s3.Scheme, storage.WithMetrics(b, sm, "s3"))
		}
		bucket = mux
	}
	s := &Server{
		cfg:    cfg,
		bucket: bucket,
		sched:  iosched.New(bucket, cfg.IO),
		mem:    cfg.Mem,
		log:    cfg.Logger,
	}
	if s.mem == nil {
		s.mem = memory.DefaultAllocator
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if cfg.Metrics != nil {
		s.registerMetrics(cfg.Metrics)
	}
	s.grpc = grpc.NewServer(sendServerOptions()...)
	flight.RegisterFlightServiceServer(s.grpc, s)
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	return s, nil
}

// Serve accepts connections on lis until GracefulStop or Stop; it returns
// nil after either.
func (s *Server) Serve(lis net.Listener) error {
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	err := s.grpc.Serve(lis)
	if err == grpc.ErrServerStopped {
		return nil
	}
	return err
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

// opened is a file open for reading: the IO handle and the format reader.
type opened struct {
	io   *iosched.File
	file scanner.File
	done func() error
}

func (o *opened) Close() error {
	if o.done != nil {
		o.done()
	}
	return o.io.Close()
}

// open opens a file through the IO scheduler and the reader for its
// format. Decoder errors caused by a failing store are reported as the
// store's error.
func (s *Server) open(ctx context.Context, info storage.Info) (*opened, error) {
	f, err := s.sched.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	o, err := s.openFormat(ctx, f)
	if err != nil {
		if serr := f.Err(); serr != nil {
			err = serr
		}
		f.Close()
		return nil, err
	}
	return o, nil
}

func (s *Server) openFormat(ctx context.Context, f *iosched.File) (_ *opened, err error) {
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
		return &opened{io: f, file: pf, done: pf.Close}, nil
	case scanner.FormatORC:
		of, err := orc.Open(ctx, name, f, s.mem)
		if err != nil {
			return nil, err
		}
		return &opened{io: f, file: of, done: of.Close}, nil
	}
	return nil, fmt.Errorf("%s: %w", name, scanner.ErrNotColumnar)
}

// ListFlights lists the files under the root whose path starts with the
// criteria's expression (a path prefix; empty lists everything), without
// the names a scan of that prefix skips (a segment starting with "." or
// "_"). Each FlightInfo has a path descriptor that GetFlightInfo accepts as
// is.
func (s *Server) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) (err error) {
	defer recoverHandler(s.log, "ListFlights", &err)
	prefix := string(c.GetExpression())
	if canonical, err := storage.Canonical(s.bucket, prefix); err == nil {
		prefix = canonical
	}
	prefix = strings.TrimPrefix(strings.TrimPrefix(prefix, "./"), "/")
	n := 0
	err = s.bucket.List(stream.Context(), prefix, func(info storage.Info) error {
		// The names a scan of the prefix would skip.
		if storage.HiddenBelow(prefix[:strings.LastIndex(prefix, "/")+1], info.Name) {
			return nil
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
	return toStatus(err)
}

// Actions served by DoAction.
var actions = []*flight.ActionType{
	{Type: "version", Description: "Returns {\"version\": ...}, the server's version."},
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
	}
	return status.Errorf(codes.InvalidArgument, "unknown action %q; available: version", a.GetType())
}
