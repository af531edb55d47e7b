package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/scand/scand/server"
	"github.com/scand/scand/server/auth"
	"github.com/scand/scand/server/auth/scope"
	"github.com/scand/scand/server/limits"
	"github.com/scand/scand/server/ticketsign"
	"github.com/scand/scand/server/tlsfiles"
)

// Defaults of the per-identity limits (see README, "Securing scand").
const (
	defaultMaxStreamsPerIdentity = 64
	defaultFlightInfoRate        = 50 // per identity per second; bursts of twice that
	// defaultHandshakeRate is per client address per second, bursts of
	// handshakeBurst: a client handshakes once per connection, and each
	// attempt costs a bcrypt comparison (tens of milliseconds of a core).
	defaultHandshakeRate = 2
	handshakeBurst       = 10
)

// securityFlags are serve's TLS, authentication, ticket and limit flags.
type securityFlags struct {
	tlsCert, tlsKey, tlsClientCA string
	authMode                     string
	identities                   string
	jwtJWKS, jwtSecretFile       string
	jwtIssuer, jwtAudience       string
	ticketKeyFile                string
	ticketTTL                    time.Duration
	s3Allow                      stringList
	gcsAllow, azureAllow         stringList
	maxStreams                   int
	flightInfoRate               float64
	handshakeRate                float64
	insecureAnywhere             bool
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func defineSecurityFlags(fs *flag.FlagSet, f *securityFlags) {
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate chain `file` (PEM); with --tls-key, serve grpc+tls:// (reloaded when it changes)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key `file` (PEM)")
	fs.StringVar(&f.tlsClientCA, "tls-client-ca", "", "CA `file` (PEM) client certificates must chain to (mutual TLS; needed by --auth mtls)")
	fs.StringVar(&f.authMode, "auth", "none", "authentication `mode`: none, tokens (bearer tokens and Handshake passwords from --identities), jwt or mtls")
	fs.StringVar(&f.identities, "identities", "", "identities `file` (YAML): token hashes, password hashes and the roots each identity may read")
	fs.StringVar(&f.jwtJWKS, "jwt-jwks", "", "JWKS `file` of the identity provider's public keys (--auth jwt)")
	fs.StringVar(&f.jwtSecretFile, "jwt-secret-file", "", "`file` holding an HS256 shared secret (--auth jwt, instead of --jwt-jwks)")
	fs.StringVar(&f.jwtIssuer, "jwt-issuer", "", "required JWT iss `claim`")
	fs.StringVar(&f.jwtAudience, "jwt-audience", "", "JWT aud `claim` that must be included")
	fs.StringVar(&f.ticketKeyFile, "ticket-key-file", "", "`file` of base64 ticket keys, one a line, the first signs (empty: a random key per process; replicas need a shared file)")
	fs.DurationVar(&f.ticketTTL, "ticket-ttl", ticketsign.DefaultTicketTTL, "how long a GetFlightInfo ticket stays valid")
	fs.Var(&f.s3Allow, "s3-allow", "S3 `bucket[/prefix]` any identity may read; repeat for more (empty: every bucket the credentials reach)")
	fs.Var(&f.gcsAllow, "gcs-allow", "Google Cloud Storage `bucket[/prefix]` any identity may read; repeat for more (empty: every bucket the credentials reach)")
	fs.Var(&f.azureAllow, "azure-allow", "Azure `container[/prefix]` any identity may read; repeat for more (empty: every container the credentials reach)")
	fs.IntVar(&f.maxStreams, "max-streams-per-identity", -1, fmt.Sprintf("concurrent DoGet streams per identity (0 = no cap; default %d, off under --auth none, where every client is one identity)", defaultMaxStreamsPerIdentity))
	fs.Float64Var(&f.flightInfoRate, "flightinfo-rate", -1, fmt.Sprintf("GetFlightInfo calls per identity per `second`, bursts of twice that (0 = no limit; default %d, off under --auth none)", defaultFlightInfoRate))
	fs.Float64Var(&f.handshakeRate, "handshake-rate", defaultHandshakeRate, fmt.Sprintf("Handshakes with a password per client address per `second`, bursts of %d (--auth tokens; 0 = no limit)", handshakeBurst))
	fs.BoolVar(&f.insecureAnywhere, "insecure-listen-anywhere", false, "allow a non-loopback --listen without TLS and authentication (logs a warning; for trusted networks only)")
}

// checkSecurity refuses combinations that would serve less securely than
// they look.
func checkSecurity(f securityFlags, listen string) error {
	tls := f.tlsCert != "" || f.tlsKey != ""
	switch f.authMode {
	case "none", "tokens", "jwt", "mtls":
	default:
		return fmt.Errorf("--auth %q: want none, tokens, jwt or mtls", f.authMode)
	}
	switch {
	case f.tlsClientCA != "" && !tls:
		return errors.New("--tls-client-ca needs --tls-cert and --tls-key: mutual TLS is TLS")
	case f.authMode == "mtls" && f.tlsClientCA == "":
		return errors.New("--auth mtls needs --tls-client-ca, the CA the client certificates are checked against")
	case f.authMode != "none" && f.identities == "":
		return fmt.Errorf("--auth %s needs --identities: the file names each identity's roots (and, for tokens, its token hashes)", f.authMode)
	case f.authMode == "jwt" && (f.jwtJWKS == "") == (f.jwtSecretFile == ""):
		return errors.New("--auth jwt needs exactly one of --jwt-jwks and --jwt-secret-file")
	case (f.authMode == "tokens" || f.authMode == "jwt") && !tls && !loopback(listen):
		return fmt.Errorf("--auth %s on %s needs --tls-cert and --tls-key: bearer tokens sent in plaintext can be read and replayed by anyone on the network (plaintext is allowed on loopback only)", f.authMode, listen)
	case !loopback(listen) && (f.authMode == "none" || !tls) && !f.insecureAnywhere:
		return fmt.Errorf("refusing to serve %s without TLS and authentication: anyone who can reach it could read every file; "+
			"add --tls-cert, --tls-key and --auth tokens|jwt|mtls, listen on 127.0.0.1, or pass --insecure-listen-anywhere on a trusted network", listen)
	}
	return nil
}

// loopback reports whether the listen address host:port is on loopback.
func loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// buildSecurity loads the files the flags name into the server's Security.
// A zero f (as demo and tests pass) is --auth none on loopback.
func buildSecurity(f securityFlags, listen string, log *slog.Logger) (server.Security, error) {
	listen = cmp.Or(listen, defaultListen)
	f.authMode = cmp.Or(f.authMode, "none")
	sec := server.Security{TicketTTL: f.ticketTTL}
	if err := checkSecurity(f, listen); err != nil {
		return sec, err
	}
	if !loopback(listen) && (f.authMode == "none" || f.tlsCert == "") {
		log.Warn("INSECURE: serving a non-loopback address without TLS and authentication (--insecure-listen-anywhere): anyone who reaches " +
			listen + " can read every file and S3 object scand can")
	}
	ring, err := loadKeyRing(f.ticketKeyFile, log)
	if err != nil {
		return sec, err
	}
	sec.Signer = ticketsign.NewSigner(ring)
	if f.tlsCert != "" || f.tlsKey != "" {
		files, err := tlsfiles.Load(tlsfiles.Options{CertFile: f.tlsCert, KeyFile: f.tlsKey, ClientCAFile: f.tlsClientCA,
			OnReload: func(err error) { logReload(log, err) }})
		if err != nil {
			return sec, err
		}
		sec.TLS = files.ServerConfig()
	}
	if sec.Guard, sec.Scopes, err = buildGuard(f, sec.Signer); err != nil {
		return sec, err
	}
	if len(f.s3Allow) > 0 {
		allow, err := scope.ParseS3AllowList(f.s3Allow)
		if err != nil {
			return sec, fmt.Errorf("--s3-allow: %w", err)
		}
		sec.S3Allow = &allow
	}
	if sec.Scopes, err = limitStores(sec.Scopes, f); err != nil {
		return sec, err
	}
	streams, rate := limitsOf(f)
	sec.Streams = limits.NewConcurrency("concurrent streams (--max-streams-per-identity)", streams)
	sec.FlightInfoRate = limits.NewRate("GetFlightInfo calls (--flightinfo-rate)", rate, int(2*rate))
	return sec, nil
}

// limitStores narrows every identity's scope (all of them under --auth
// none, where scopes is nil) by --gcs-allow and --azure-allow, as the
// server narrows S3 names by --s3-allow.
func limitStores(scopes func(string) (scope.Scope, bool), f securityFlags) (func(string) (scope.Scope, bool), error) {
	var limits []func(scope.Scope) scope.Scope
	for _, l := range []struct {
		flag, scheme string
		entries      []string
	}{{"--gcs-allow", "gs", f.gcsAllow}, {"--azure-allow", "az", f.azureAllow}} {
		if len(l.entries) == 0 {
			continue
		}
		allow, err := scope.ParseAllowList(l.scheme, l.entries)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.flag, err)
		}
		limits = append(limits, func(s scope.Scope) scope.Scope { return s.Limit(l.scheme, allow) })
	}
	if len(limits) == 0 {
		return scopes, nil
	}
	return func(identity string) (scope.Scope, bool) {
		s, ok := scope.Everything(), true
		if scopes != nil {
			s, ok = scopes(identity)
		}
		for _, limit := range limits {
			s = limit(s)
		}
		return s, ok
	}, nil
}

// limitsOf resolves the limit flags: unset (-1) means the default, which
// is off under --auth none, where every client is the one identity
// "anonymous" and a per-identity limit would be a global one.
func limitsOf(f securityFlags) (streams int, rate float64) {
	streams, rate = f.maxStreams, f.flightInfoRate
	if streams < 0 {
		streams = defaultMaxStreamsPerIdentity
		if f.authMode == "none" {
			streams = 0
		}
	}
	if rate < 0 {
		rate = defaultFlightInfoRate
		if f.authMode == "none" {
			rate = 0
		}
	}
	return streams, rate
}

func logReload(log *slog.Logger, err error) {
	if err != nil {
		log.Error("TLS files changed but did not load; the previous certificate keeps serving", "err", err.Error())
		return
	}
	log.Info("TLS files reloaded")
}

// loadKeyRing reads --ticket-key-file, or generates a key.
func loadKeyRing(path string, log *slog.Logger) (*ticketsign.KeyRing, error) {
	if path != "" {
		return ticketsign.LoadKeyRing(path)
	}
	log.Info("no --ticket-key-file: tickets are signed with a key generated at start; replicas behind one address need a shared --ticket-key-file")
	return ticketsign.GenerateKeyRing()
}

// buildGuard makes the Guard of --auth and the scopes of --identities.
func buildGuard(f securityFlags, signer *ticketsign.Signer) (*auth.Guard, func(string) (scope.Scope, bool), error) {
	guard := &auth.Guard{Exempt: auth.HealthMethods}
	if f.authMode == "none" {
		guard.Authenticator = auth.None()
		return guard, nil, nil
	}
	cfg, err := auth.LoadConfig(f.identities)
	if err != nil {
		return nil, nil, err
	}
	switch f.authMode {
	case "tokens":
		tokens := auth.NewTokens(cfg, signer, time.Hour)
		guard.Authenticator, guard.Basic = tokens, tokens
		guard.HandshakeRate = limits.NewRate("Handshake password attempts per client address (--handshake-rate)",
			f.handshakeRate, max(handshakeBurst, int(2*f.handshakeRate)))
	case "jwt":
		j, err := auth.NewJWT(auth.JWTOptions{JWKSFile: f.jwtJWKS, HS256SecretFile: f.jwtSecretFile,
			Issuer: f.jwtIssuer, Audience: f.jwtAudience})
		if err != nil {
			return nil, nil, err
		}
		guard.Authenticator = j
	case "mtls":
		guard.Authenticator = auth.MTLS()
	}
	return guard, cfg.Scope, nil
}
