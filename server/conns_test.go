package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/net/http2"

	"github.com/scand/scand/iosched"
)

// rawHTTP2 opens a connection to addr that sends the HTTP/2 preface and
// SETTINGS, and then, if half, the first half of a HEADERS frame: what a
// client that holds connections without calling sends.
func rawHTTP2(t *testing.T, addr string, half bool) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if half {
		// A frame header announcing 100 bytes of HEADERS, and 10 of them.
		if _, err := conn.Write([]byte{0, 0, 100, byte(http2.FrameHeaders), 0x4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// closedWithin reads conn (whatever the server sends) until it is closed,
// and reports whether that happened within d.
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	return err == nil || !errors.Is(err, os.ErrDeadlineExceeded)
}

// A connection that starts no call in time is closed, whatever it sent;
// one that calls keeps its connection past that time.
func TestConnFirstCallTimeout(t *testing.T) {
	dir := wideFile(t, 1000)
	srv, addr := serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{Limits: Limits{FirstCallTimeout: 300 * time.Millisecond}}))
	c := dialForTest(t, addr)
	planOne(t, c, "wide.parquet")
	for _, half := range []bool{false, true} {
		conn := rawHTTP2(t, addr, half)
		if !closedWithin(conn, 5*time.Second) {
			t.Errorf("half HEADERS %v: the connection was still open 5 s after the 300 ms first-call timeout", half)
		}
	}
	time.Sleep(500 * time.Millisecond)
	planOne(t, c, "wide.parquet") // the calling client's connection held
	if n := srv.conns.noCall.Load(); n != 2 {
		t.Errorf("%d connections closed for no call, want 2", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := srv.conns.Connections(); n == 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d connections counted open, want the client's one", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Past the per-address cap a connection is refused at accept with a
// GOAWAY naming the limit; a closed connection gives its place back.
func TestMaxConnsPerPeer(t *testing.T) {
	dir := wideFile(t, 1000)
	srv, addr := serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{Limits: Limits{MaxConnsPerPeer: 2}}))
	a, b := rawHTTP2(t, addr, false), rawHTTP2(t, addr, false)
	_ = b
	over, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	fr := http2.NewFramer(io.Discard, over)
	var goAway *http2.GoAwayFrame
	for goAway == nil {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the refused connection: %v (want a GOAWAY)", err)
		}
		goAway, _ = f.(*http2.GoAwayFrame)
	}
	if goAway.ErrCode != http2.ErrCodeEnhanceYourCalm || !strings.Contains(string(goAway.DebugData()), "--max-conns-per-peer") {
		t.Errorf("GOAWAY %v %q, want ENHANCE_YOUR_CALM naming --max-conns-per-peer", goAway.ErrCode, goAway.DebugData())
	}
	if n := srv.conns.refused.Load(); n != 1 {
		t.Errorf("%d refused, want 1", n)
	}
	// A stock client over the cap fails with UNAVAILABLE; once a place
	// is free, it connects.
	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := srv.conns.Connections(); n <= 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d connections counted after one closed, want 1", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := dialForTest(t, addr)
	if _, err := c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"wide.parquet"}}); err != nil {
		t.Fatalf("a client within the cap: %v", err)
	}
}
