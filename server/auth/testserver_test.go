package auth

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// echoServer is a tiny Flight service that answers each call with the
// identity its handler saw, as "name|method".
type echoServer struct {
	flight.BaseFlightServer
}

func whoami(ctx context.Context) []byte {
	id, ok := FromContext(ctx)
	if !ok {
		return []byte("<no identity>")
	}
	return []byte(id.Name + "|" + string(id.Method))
}

func (echoServer) Handshake(s flight.FlightService_HandshakeServer) error { return ServeHandshake(s) }

func (echoServer) GetFlightInfo(ctx context.Context, _ *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return &flight.FlightInfo{AppMetadata: whoami(ctx)}, nil
}

func (echoServer) DoGet(_ *flight.Ticket, s flight.FlightService_DoGetServer) error {
	return s.Send(&flight.FlightData{AppMetadata: whoami(s.Context())})
}

func (echoServer) ListFlights(_ *flight.Criteria, s flight.FlightService_ListFlightsServer) error {
	return s.Send(&flight.FlightInfo{AppMetadata: whoami(s.Context())})
}

// serveGuarded runs echoServer and the health service behind g on a
// loopback port; creds nil means plaintext.
func serveGuarded(t *testing.T, g *Guard, creds credentials.TransportCredentials) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(g.UnaryInterceptor()), grpc.StreamInterceptor(g.StreamInterceptor())}
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	srv := grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(srv, echoServer{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// testClient is a connection to a test server plus the calls under test.
type testClient struct {
	t    *testing.T
	conn *grpc.ClientConn
	fc   flight.FlightServiceClient
}

func dial(t *testing.T, addr string, creds credentials.TransportCredentials) *testClient {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &testClient{t: t, conn: conn, fc: flight.NewFlightServiceClient(conn)}
}

func callCtx(t *testing.T, authorization string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	if authorization != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	}
	return ctx
}

// calls makes GetFlightInfo (unary), DoGet and ListFlights (streams) with
// the given authorization header and returns each one's identity or error.
func (c *testClient) calls(authorization string) map[string]result {
	out := map[string]result{}
	info, err := c.fc.GetFlightInfo(callCtx(c.t, authorization), &flight.FlightDescriptor{})
	out["GetFlightInfo"] = result{string(info.GetAppMetadata()), err}

	get, err := c.fc.DoGet(callCtx(c.t, authorization), &flight.Ticket{})
	if err == nil {
		var d *flight.FlightData
		if d, err = get.Recv(); err == nil {
			out["DoGet"] = result{string(d.GetAppMetadata()), nil}
		}
	}
	if err != nil {
		out["DoGet"] = result{"", err}
	}

	list, err := c.fc.ListFlights(callCtx(c.t, authorization), &flight.Criteria{})
	if err == nil {
		var fi *flight.FlightInfo
		if fi, err = list.Recv(); err == nil {
			out["ListFlights"] = result{string(fi.GetAppMetadata()), nil}
		}
	}
	if err != nil {
		out["ListFlights"] = result{"", err}
	}
	return out
}

type result struct {
	who string
	err error
}

// expectAll checks every call of calls answered who.
func expectAll(t *testing.T, results map[string]result, who string) {
	t.Helper()
	for call, r := range results {
		if r.err != nil || r.who != who {
			t.Errorf("%s: got %q, %v; want %q", call, r.who, r.err, who)
		}
	}
}

// expectRejected checks every call of calls failed with code and a message
// containing each of hints.
func expectRejected(t *testing.T, results map[string]result, code codes.Code, hints ...string) {
	t.Helper()
	for call, r := range results {
		if status.Code(r.err) != code {
			t.Errorf("%s: got %q, %v; want %v", call, r.who, r.err, code)
			continue
		}
		for _, h := range hints {
			if !strings.Contains(status.Convert(r.err).Message(), h) {
				t.Errorf("%s: message %q lacks %q", call, status.Convert(r.err).Message(), h)
			}
		}
	}
}

func (c *testClient) health(authorization string) error {
	_, err := healthpb.NewHealthClient(c.conn).Check(callCtx(c.t, authorization), &healthpb.HealthCheckRequest{})
	return err
}

func bearerContext(token string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+token))
}

// metadataFromOutgoing returns the authorization header a client context
// will send.
func metadataFromOutgoing(ctx context.Context) (string, bool) {
	md, ok := metadata.FromOutgoingContext(ctx)
	if !ok || len(md.Get("authorization")) == 0 {
		return "", false
	}
	vals := md.Get("authorization")
	return vals[len(vals)-1], true
}
