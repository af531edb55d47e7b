package auth

import (
	"context"
	"fmt"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

const mtlsHint = "this server identifies clients by their TLS client certificate: connect over TLS with a " +
	"certificate its client CA signed (pyarrow: flight.FlightClient(location, tls_root_certs=..., " +
	"cert_chain=..., private_key=...))"

// mtls is the Authenticator of --auth mtls.
type mtls struct{}

// MTLS returns the Authenticator that names each call by the subject of
// its verified client certificate, as crypto/x509's pkix.Name.String()
// writes it ("CN=alice,OU=analytics,O=Example"). The transport must verify
// client certificates (tlsfiles with a client CA): only verified chains
// count, never a certificate a client merely presented.
func MTLS() Authenticator { return mtls{} }

func (mtls) Authenticate(ctx context.Context) (Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.AuthInfo == nil {
		return Identity{}, fmt.Errorf("%w: the connection is not TLS; %s", ErrUnauthenticated, mtlsHint)
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return Identity{}, fmt.Errorf("%w: the connection is not TLS; %s", ErrUnauthenticated, mtlsHint)
	}
	chains := info.State.VerifiedChains
	if len(chains) == 0 || len(chains[0]) == 0 {
		return Identity{}, fmt.Errorf("%w: no verified client certificate; %s", ErrUnauthenticated, mtlsHint)
	}
	subject := chains[0][0].Subject.String()
	if subject == "" {
		return Identity{}, fmt.Errorf("%w: the client certificate has an empty subject", ErrUnauthenticated)
	}
	return Identity{Name: subject, Method: MethodMTLS}, nil
}
