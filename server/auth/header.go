package auth

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/scand/scand/internal/echo"
)

// Header is the metadata key credentials travel in, as every Flight client
// sends it (gRPC lower-cases metadata keys).
const Header = "authorization"

// bearerHint is what a client without credentials is told to send.
const bearerHint = `send the header "authorization: Bearer <token>" on every call, DoGet included ` +
	`(pyarrow: flight.FlightCallOptions(headers=[(b"authorization", b"Bearer <token>")]))`

// authHeader returns the scheme and credential of the call's
// authorization header; scheme is "" when there is none.
func authHeader(ctx context.Context) (scheme, credential string) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(Header)
	if len(vals) == 0 {
		return "", ""
	}
	scheme, credential, _ = strings.Cut(strings.TrimSpace(vals[0]), " ")
	return scheme, strings.TrimLeft(credential, " ")
}

// bearer returns the call's bearer token, or an error saying what to send.
func bearer(ctx context.Context, hint string) (string, error) {
	scheme, token := authHeader(ctx)
	switch {
	case scheme == "":
		return "", fmt.Errorf("%w: no credentials: %s", ErrUnauthenticated, hint)
	case !strings.EqualFold(scheme, "Bearer"):
		return "", fmt.Errorf("%w: authorization scheme %s is not accepted here: %s", ErrUnauthenticated, echo.Quote(scheme), hint)
	case token == "":
		return "", fmt.Errorf("%w: empty bearer token: %s", ErrUnauthenticated, hint)
	}
	return token, nil
}

// basic parses the call's Basic credentials; ok is false when the header
// is not Basic at all.
func basic(ctx context.Context) (user, password string, ok bool, err error) {
	scheme, cred := authHeader(ctx)
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", false, nil
	}
	// pyarrow pads, arrow-go does not: accept both.
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(cred)
	}
	if err != nil {
		return "", "", true, fmt.Errorf("%w: Basic credentials are not base64(user:password)", ErrUnauthenticated)
	}
	user, password, found := strings.Cut(string(raw), ":")
	if !found || user == "" {
		return "", "", true, fmt.Errorf("%w: Basic credentials are not base64(user:password)", ErrUnauthenticated)
	}
	return user, password, true, nil
}
