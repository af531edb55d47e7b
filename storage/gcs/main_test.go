package gcs_test

// The tests in this package run against a real GCS emulator,
// fake-gcs-server, started once for the package by TestMain. Fault tests
// put toxiproxy between the backend and the emulator. Both come from
// scripts/install-tools.sh; without them the tests skip and say so.

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	gstorage "cloud.google.com/go/storage"
	"go.uber.org/goleak"
	"google.golang.org/api/option"

	"github.com/scand/scand/storage/gcs"
	"github.com/scand/scand/storage/internal/testenv"
)

var (
	emuAddr string // fake-gcs-server's host:port
	emuErr  error
	emuSkip string
	admin   *gstorage.Client // uploads test objects straight to the emulator
	toxi    *testenv.Toxiproxy
	scratch string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	scratch, err = os.MkdirTemp("", "scand-gcs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(scratch)
	srv := startEmulator()
	defer srv.Stop()
	toxi = testenv.NewToxiproxy(scratch)
	defer toxi.Stop()
	code := m.Run()
	if admin != nil {
		admin.Close()
	}
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			goleak.IgnoreAnyFunction("github.com/scand/scand/storage/internal/testenv.Start.func1"),
			goleak.IgnoreAnyFunction("go.opencensus.io/stats/view.(*worker).start"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			return 1
		}
	}
	return code
}

func startEmulator() *testenv.Server {
	bin, err := testenv.Tool("SCAND_FAKE_GCS", ".tools/bin/fake-gcs-server")
	if err != nil || bin == "" {
		emuErr = err
		emuSkip = "fake-gcs-server not found: " + testenv.InstallHint + " or set SCAND_FAKE_GCS"
		return nil
	}
	addr, err := testenv.FreeAddr()
	if err != nil {
		emuErr = err
		return nil
	}
	host, port, _ := net.SplitHostPort(addr)
	srv, err := testenv.Start("fake-gcs-server", scratch, bin, []string{
		"-scheme", "http", "-host", host, "-port", port, "-public-host", addr, "-backend", "memory", "-log-level", "error",
	}, func() bool { return testenv.HTTPUp("http://" + addr + "/storage/v1/b") })
	if err != nil {
		emuErr = err
		return nil
	}
	emuAddr = addr
	admin, err = gstorage.NewClient(context.Background(), option.WithEndpoint(endpoint(addr)), option.WithoutAuthentication())
	if err != nil {
		emuErr = err
	}
	return srv
}

func endpoint(addr string) string { return "http://" + addr + "/storage/v1/" }

// needEmulator skips the test when fake-gcs-server is not installed and
// fails it when it is but did not start.
func needEmulator(t *testing.T) {
	t.Helper()
	switch {
	case emuErr != nil:
		t.Fatalf("fake-gcs-server: %v", emuErr)
	case emuSkip != "":
		t.Skip(emuSkip)
	}
}

var bucketSeq atomic.Int64

// newGCSBucket creates a bucket holding objects (key -> content) and
// returns its name.
func newGCSBucket(t *testing.T, objects map[string][]byte) string {
	t.Helper()
	needEmulator(t)
	name := fmt.Sprintf("scand-test-%d", bucketSeq.Add(1))
	if err := admin.Bucket(name).Create(context.Background(), "scand", nil); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	for key, data := range objects {
		put(t, name, key, data)
	}
	return name
}

func put(t *testing.T, bucket, key string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := admin.Bucket(bucket).Object(key).NewWriter(ctx)
	if _, err := w.Write(data); err != nil {
		t.Fatalf("write gs://%s/%s: %v", bucket, key, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("write gs://%s/%s: %v", bucket, key, err)
	}
}

// newBackend returns the backend under test talking to ep (the emulator
// when ""), unauthenticated unless cfg says otherwise.
func newBackend(t *testing.T, ep string, cfg gcs.Config) *gcs.Bucket {
	t.Helper()
	needEmulator(t)
	if ep == "" {
		ep = endpoint(emuAddr)
	}
	cfg.Endpoint = ep
	if cfg.CredentialsFile == "" {
		cfg.Anonymous = true
	}
	b, err := gcs.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("gcs.New: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
