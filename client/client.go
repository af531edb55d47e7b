package client

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// DefaultAddr is where `scand serve` listens unless told otherwise.
const DefaultAddr = "grpc://127.0.0.1:8815"

// defaultPort is used when an address names only a host.
const defaultPort = "8815"

// maxRecvMsgBytes raises gRPC's 4 MiB default receive limit on every call.
// It is the most a scan may ask for (WithMaxMessageBytes), and the
// server's own cap on max_message_bytes, whose batches are cut at 3/4 of
// it: room for IPC framing and a batch the server's estimate undercounts.
const maxRecvMsgBytes = 64 << 20 // 64 MiB

// DefaultMaxMessageBytes is the largest Flight message a scan tells the
// server it accepts (ScanRequest.max_message_bytes) unless
// WithMaxMessageBytes says otherwise: the server then aims batches at
// 4 MiB instead of 2 MiB. bench/msgsize picked it: 8 MiB saved server CPU
// per GB on wide and narrow rows and cost the client none; 32 and 64 MiB
// saved the server no more and cost this client more (every large batch
// lands in freshly faulted memory: page faults per GB doubled).
const DefaultMaxMessageBytes = 8 << 20 // 8 MiB

const (
	// DefaultConcurrency is the number of DoGet streams a scan runs at once.
	DefaultConcurrency = 4
	// DefaultBufferBatches is the number of batches each running stream may
	// hold ahead of the reader.
	DefaultBufferBatches = 2
)

// Option configures Dial or Scan. Options given to Dial become the
// client's defaults; options given to Scan override them for that scan.
type Option func(*options)

type options struct {
	mem         memory.Allocator
	concurrency int
	buffer      int
	stockCodec  bool
	gather      bool        // decode FlightData with the one-copy codec (WithGatheringReceive)
	maxMessage  int64       // max_message_bytes sent when the request has none; 0 none
	token       string      // bearer token sent on every call; "" none
	tls         *tls.Config // nil: plaintext, unless the address is grpc+tls://
}

// WithToken sends "authorization: Bearer <token>" on every call (the plan,
// each DoGet, listings), as scand's --auth tokens and jwt expect. Given to
// Dial only; over plaintext it is allowed, for servers on loopback.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithTLS connects over TLS with cfg: RootCAs to trust the server's
// certificate (nil: the system's), Certificates for mutual TLS. A
// grpc+tls:// address without WithTLS uses the system's roots. Given to
// Dial only.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) { o.tls = cfg }
}

// bearer is the per-call credential of WithToken.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false so a token reaches a server on
// loopback without TLS; scand itself refuses plaintext tokens elsewhere.
func (bearer) RequireTransportSecurity() bool { return false }

// WithStockCodec makes Dial decode FlightData with the standard protobuf
// codec, which copies every body twice, and keep gRPC's default windows,
// instead of ReceiveOptions. It is for comparisons; both read any Flight
// server.
func WithStockCodec() Option {
	return func(o *options) { o.stockCodec = true }
}

// WithGatheringReceive makes scans decode each FlightData by copying the
// message into one buffer (ZeroCopyCodec's FlightData path) and handing it
// to arrow-go's Flight record reader, instead of building batches from
// the buffers gRPC received (wire.Reader). It is for comparisons; both
// give the same batches.
func WithGatheringReceive() Option {
	return func(o *options) { o.gather = true }
}

// WithMaxMessageBytes sets the largest Flight message, in bytes, a scan
// tells the server it accepts, when the ScanRequest does not set
// max_message_bytes itself; the server sizes its batches from it. The
// default is [DefaultMaxMessageBytes]; 0 (or less) sends nothing, so the
// server keeps every message under gRPC's default 4 MiB, as for stock
// clients. Values above 64 MiB, the client's receive limit and the
// server's cap, mean 64 MiB. Given to Dial or to Scan.
func WithMaxMessageBytes(n int64) Option {
	return func(o *options) { o.maxMessage = min(max(n, 0), maxRecvMsgBytes) }
}

// WithAllocator sets the allocator for the batches a scan returns and for
// decoding schemas. By default the Arrow buffers a scan copies (see
// "Receiving" in the package doc) come from a pool that recycles them,
// and everything else from memory.DefaultAllocator.
func WithAllocator(mem memory.Allocator) Option {
	return func(o *options) { o.mem = mem }
}

// WithConcurrency sets how many endpoints (DoGet streams) a scan reads at
// once. Values below 1 mean 1. The default is [DefaultConcurrency].
func WithConcurrency(n int) Option {
	return func(o *options) { o.concurrency = max(n, 1) }
}

// WithBufferBatches sets how many batches each running stream may hold
// ahead of the reader. Values below 0 mean 0 (a stream then hands over one
// batch at a time). The default is [DefaultBufferBatches].
func WithBufferBatches(n int) Option {
	return func(o *options) { o.buffer = max(n, 0) }
}

// allocator is the allocator for schemas and for arrow-go's readers.
func (o options) allocator() memory.Allocator {
	if o.mem == nil {
		return memory.DefaultAllocator
	}
	return o.mem
}

func (o options) with(opts []Option) options {
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Client talks to one scand server. It is safe for concurrent use; share
// one Client rather than dialling per request, since each Client owns a
// gRPC connection.
type Client struct {
	addr string // host:port, for messages
	conn *grpc.ClientConn
	fc   flight.Client
	opts options
	// pool holds the connections to the replicas endpoints name as
	// locations (replicas.go), this one included.
	pool *replicas
}

// Dial returns a client of the scand server at addr, which is
// "grpc://host:port", "grpc+tcp://host:port", "grpc+tls://host:port" or
// "host:port"; a missing port means 8815. The connection is plain TCP
// unless the address is grpc+tls:// or WithTLS is given.
//
// Dial does not wait for the server: gRPC connects on the first call, so an
// unreachable server is reported by that call (as an [*Error] saying so).
// ctx is not used after Dial returns.
func Dial(ctx context.Context, addr string, opts ...Option) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	target, useTLS, err := parseAddr(addr)
	if err != nil {
		return nil, err
	}
	o := options{
		concurrency: DefaultConcurrency,
		buffer:      DefaultBufferBatches,
		maxMessage:  DefaultMaxMessageBytes,
	}.with(opts)
	dial := func(target string, useTLS bool) (*grpc.ClientConn, error) {
		return grpc.NewClient(target, dialOptions(o, useTLS)...)
	}
	conn, err := dial(target, useTLS)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", target, err)
	}
	c := &Client{
		addr: target,
		conn: conn,
		fc:   flight.NewClientFromConn(conn, nil),
		opts: o,
	}
	c.pool = &replicas{dial: dial, own: &replica{addr: target, fc: c.fc, conn: conn}, ownTLS: useTLS || o.tls != nil}
	return c, nil
}

// dialOptions are the gRPC options of every connection of a client, to
// the server it dialled and to every replica a location names: the same
// credentials (token, TLS settings) go to each.
func dialOptions(o options, useTLS bool) []grpc.DialOption {
	creds := insecure.NewCredentials()
	if useTLS || o.tls != nil {
		creds = credentials.NewTLS(cmp.Or(o.tls, &tls.Config{}))
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsgBytes)),
	}
	if o.token != "" {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(bearer(o.token)))
	}
	if !o.stockCodec {
		dialOpts = append(dialOpts, ReceiveOptions()...)
	}
	return dialOpts
}

// parseAddr turns the forms Dial accepts into a gRPC target "host:port",
// and whether the scheme asks for TLS.
func parseAddr(addr string) (target string, useTLS bool, err error) {
	hostport := addr
	if scheme, rest, ok := strings.Cut(addr, "://"); ok {
		switch scheme {
		case "grpc", "grpc+tcp":
			hostport = rest
		case "grpc+tls":
			hostport, useTLS = rest, true
		default:
			return "", false, fmt.Errorf("client: address %q: unknown scheme %q; use grpc://host:port or grpc+tls://host:port", addr, scheme)
		}
	}
	hostport = strings.TrimSuffix(hostport, "/")
	if hostport == "" || strings.ContainsAny(hostport, "/?#") {
		return "", false, fmt.Errorf("client: address %q: want grpc://host:port or host:port", addr)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port: "host" or "[::1]".
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
		port = defaultPort
	}
	if host == "" {
		return "", false, fmt.Errorf("client: address %q: missing host", addr)
	}
	return net.JoinHostPort(host, port), useTLS, nil
}

// Addr returns the server's address as host:port.
func (c *Client) Addr() string { return c.addr }

// Close closes the connection and those to the replicas endpoints named.
// Scans still running fail.
func (c *Client) Close() error {
	return errors.Join(c.pool.close(), c.conn.Close())
}

// descriptor encodes req as the command of a Flight descriptor, with
// max_message_bytes set from o when req leaves it 0 (req itself is not
// changed). scand also accepts JSON commands (for hand-written clients);
// binary is smaller and exact, so the Go client uses it.
func descriptor(req *scandv1.ScanRequest, o options) (*flight.FlightDescriptor, error) {
	if req == nil {
		return nil, errors.New("client: nil ScanRequest")
	}
	if req.GetMaxMessageBytes() == 0 && o.maxMessage > 0 {
		req = proto.CloneOf(req)
		req.MaxMessageBytes = o.maxMessage
	}
	cmd, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("client: encode ScanRequest: %w", err)
	}
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}, nil
}

// Info plans the scan req on the server without reading any rows. The
// result has the scan's schema (decode it with flight.DeserializeSchema),
// the expected row and byte totals, and one endpoint per split.
func (c *Client) Info(ctx context.Context, req *scandv1.ScanRequest) (*flight.FlightInfo, error) {
	return c.info(ctx, req, c.opts)
}

// info is Info with the options of one scan (max_message_bytes).
func (c *Client) info(ctx context.Context, req *scandv1.ScanRequest, o options) (*flight.FlightInfo, error) {
	desc, err := descriptor(req, o)
	if err != nil {
		return nil, err
	}
	info, err := c.fc.GetFlightInfo(ctx, desc)
	if err != nil {
		return nil, c.wrap(ctx, "plan scan", err)
	}
	return info, nil
}

// Schema returns the schema the scan req would have.
func (c *Client) Schema(ctx context.Context, req *scandv1.ScanRequest) (*arrow.Schema, error) {
	desc, err := descriptor(req, c.opts)
	if err != nil {
		return nil, err
	}
	res, err := c.fc.GetSchema(ctx, desc)
	if err != nil {
		return nil, c.wrap(ctx, "get schema", err)
	}
	schema, err := flight.DeserializeSchema(res.GetSchema(), c.opts.allocator())
	if err != nil {
		return nil, fmt.Errorf("client: decode schema from %s: %w", c.addr, err)
	}
	return schema, nil
}

// Version returns the version the server reports.
func (c *Client) Version(ctx context.Context) (string, error) {
	stream, err := c.fc.DoAction(ctx, &flight.Action{Type: "version"})
	if err != nil {
		return "", c.wrap(ctx, "version", err)
	}
	res, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("client: version: %s sent no result", c.addr)
		}
		return "", c.wrap(ctx, "version", err)
	}
	// Drain so the call completes cleanly; a trailing error still counts.
	if err := flight.ReadUntilEOF(stream); err != nil {
		return "", c.wrap(ctx, "version", err)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(res.GetBody(), &v); err != nil {
		return "", fmt.Errorf("client: version: decode %q: %w", res.GetBody(), err)
	}
	return v.Version, nil
}

// List returns one FlightInfo per file whose path starts with prefix
// (relative to the server's root; "" lists every file). Each info has a
// PATH descriptor naming the file.
func (c *Client) List(ctx context.Context, prefix string) ([]*flight.FlightInfo, error) {
	stream, err := c.fc.ListFlights(ctx, &flight.Criteria{Expression: []byte(prefix)})
	if err != nil {
		return nil, c.wrap(ctx, "list", err)
	}
	var infos []*flight.FlightInfo
	for {
		info, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return infos, nil
		}
		if err != nil {
			return nil, c.wrap(ctx, "list", err)
		}
		infos = append(infos, info)
	}
}
