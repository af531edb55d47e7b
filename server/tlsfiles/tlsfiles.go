package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// DefaultCheckInterval is how often, at most, the files are stat'ed.
const DefaultCheckInterval = 2 * time.Second

// Options name the PEM files and how to watch them.
type Options struct {
	CertFile string // certificate chain, leaf first (--tls-cert)
	KeyFile  string // the leaf's private key (--tls-key)
	// ClientCAFile, if set, turns on mutual TLS: clients must present a
	// certificate chaining to one of these CAs (--tls-client-ca).
	ClientCAFile string
	// CheckInterval bounds how often the files are stat'ed; 0 means
	// DefaultCheckInterval.
	CheckInterval time.Duration
	// OnReload, if set, is called after each reload attempt: err is nil when
	// new files are in use, non-nil when they did not load and the previous
	// ones keep serving. It runs inside a TLS handshake: keep it quick.
	OnReload func(err error)
}

// Files holds the loaded certificate and client CAs and reloads them when
// their files change. It is safe for concurrent use.
type Files struct {
	opts Options
	now  func() time.Time

	mu        sync.Mutex
	config    *tls.Config // the config handshakes use now
	stamps    []stamp     // what config was loaded from
	lastCheck time.Time
}

// stamp is what is compared to tell a file changed.
type stamp struct {
	size    int64
	modTime time.Time
}

// Load reads the files once; an error here means the server must not
// start. opts.CertFile and opts.KeyFile are required.
func Load(opts Options) (*Files, error) {
	if opts.CertFile == "" || opts.KeyFile == "" {
		return nil, errors.New("tlsfiles: both a certificate (--tls-cert) and its key (--tls-key) are needed")
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = DefaultCheckInterval
	}
	f := &Files{opts: opts, now: time.Now}
	stamps, err := f.stat()
	if err != nil {
		return nil, err
	}
	config, err := f.load()
	if err != nil {
		return nil, err
	}
	f.config, f.stamps, f.lastCheck = config, stamps, f.now()
	return f, nil
}

// ServerConfig returns the config to hand to grpc's credentials.NewTLS. Its
// GetConfigForClient answers each handshake with the current files.
func (f *Files) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return f.current(), nil
		},
	}
}

// MutualTLS reports whether client certificates are required.
func (f *Files) MutualTLS() bool { return f.opts.ClientCAFile != "" }

// current returns the config to use, reloading first if a file changed and
// the last check is CheckInterval old.
func (f *Files) current() *tls.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if now.Sub(f.lastCheck) < f.opts.CheckInterval {
		return f.config
	}
	f.lastCheck = now
	stamps, err := f.stat()
	if err == nil && equalStamps(stamps, f.stamps) {
		return f.config
	}
	if err == nil {
		var config *tls.Config
		if config, err = f.load(); err == nil {
			f.config, f.stamps = config, stamps
		}
	}
	if f.opts.OnReload != nil {
		f.opts.OnReload(err)
	}
	return f.config
}

func (f *Files) paths() []string {
	paths := []string{f.opts.CertFile, f.opts.KeyFile}
	if f.opts.ClientCAFile != "" {
		paths = append(paths, f.opts.ClientCAFile)
	}
	return paths
}

func (f *Files) stat() ([]stamp, error) {
	var stamps []stamp
	for _, p := range f.paths() {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("tlsfiles: %w", err)
		}
		stamps = append(stamps, stamp{size: fi.Size(), modTime: fi.ModTime()})
	}
	return stamps, nil
}

func equalStamps(a, b []stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].size != b[i].size || !a[i].modTime.Equal(b[i].modTime) {
			return false
		}
	}
	return true
}

// load builds a config from the files as they are now.
func (f *Files) load() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(f.opts.CertFile, f.opts.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tlsfiles: loading %s and %s: %w", f.opts.CertFile, f.opts.KeyFile, err)
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if f.opts.ClientCAFile == "" {
		return config, nil
	}
	pem, err := os.ReadFile(f.opts.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("tlsfiles: reading client CAs: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tlsfiles: %s holds no PEM certificate", f.opts.ClientCAFile)
	}
	config.ClientCAs = pool
	config.ClientAuth = tls.RequireAndVerifyClientCert
	return config, nil
}
