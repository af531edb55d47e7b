package cluster

import (
	"net"
	"testing"
)

func TestParseLocation(t *testing.T) {
	for in, want := range map[string]struct{ scheme, hostPort string }{
		"grpc://10.0.0.1:8815":      {"grpc", "10.0.0.1:8815"},
		"grpc+tls://[fd00::1]:8815": {"grpc+tls", "[fd00::1]:8815"},
		"grpc://scand-0.scand:1/":   {"grpc", "scand-0.scand:1"},
		"grpc://a":                  {},
		"grpc://:8815":              {},
		"grpc://a:":                 {},
		"http://a:1":                {},
		"a:1":                       {},
		"grpc://a:1/path":           {},
		"grpc://a:1?x=1":            {},
		"grpc://u@a:1":              {},
		"":                          {},
	} {
		scheme, hp, err := ParseLocation(in)
		if (err == nil) != (want.scheme != "") || scheme != want.scheme || hp != want.hostPort {
			t.Errorf("ParseLocation(%q) = %q, %q, %v; want %q, %q", in, scheme, hp, err, want.scheme, want.hostPort)
		}
	}
}

// FuzzParseLocation: --advertise is user input; whatever it accepts is a
// scheme scand serves and a host:port Membership can compare and dial.
func FuzzParseLocation(f *testing.F) {
	for _, s := range []string{"grpc://10.0.0.1:8815", "grpc+tls://[::1]:1", "grpc://a", "http://x:1", "grpc://%zz:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scheme, hp, err := ParseLocation(s)
		if err != nil {
			return
		}
		if scheme != "grpc" && scheme != "grpc+tls" {
			t.Fatalf("%q: scheme %q", s, scheme)
		}
		if host, port, err := net.SplitHostPort(hp); err != nil || host == "" || port == "" {
			t.Fatalf("%q: host:port %q: %v", s, hp, err)
		}
	})
}
