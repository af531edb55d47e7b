package azure_test

// The tests in this package run against a real Azure Blob emulator,
// Azurite, started once for the package by TestMain. Fault tests put
// toxiproxy between the backend and Azurite. Both come from
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

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"go.uber.org/goleak"

	"github.com/scand/scand/storage/azure"
	"github.com/scand/scand/storage/internal/testenv"
)

// Azurite's well-known development account.
const (
	account    = "devstoreaccount1"
	accountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

var (
	emuAddr string // Azurite's blob service host:port
	emuErr  error
	emuSkip string
	admin   *azblob.Client // uploads test blobs straight to Azurite
	toxi    *testenv.Toxiproxy
	scratch string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	scratch, err = os.MkdirTemp("", "scand-azure-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(scratch)
	srv := startAzurite()
	defer srv.Stop()
	toxi = testenv.NewToxiproxy(scratch)
	defer toxi.Stop()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreAnyFunction("github.com/scand/scand/storage/internal/testenv.Start.func1"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			return 1
		}
	}
	return code
}

func startAzurite() *testenv.Server {
	bin, err := testenv.Tool("SCAND_AZURITE", ".tools/azurite/node_modules/.bin/azurite-blob")
	if err != nil || bin == "" {
		emuErr = err
		emuSkip = "Azurite (azurite-blob) not found: " + testenv.InstallHint + " or set SCAND_AZURITE"
		return nil
	}
	addr, err := testenv.FreeAddr()
	if err != nil {
		emuErr = err
		return nil
	}
	host, port, _ := net.SplitHostPort(addr)
	srv, err := testenv.Start("azurite", scratch, bin, []string{
		"--blobHost", host, "--blobPort", port, "--inMemoryPersistence",
		"--skipApiVersionCheck", "--disableProductStyleUrl", "--silent",
	}, func() bool { return testenv.HTTPUp("http://" + addr + "/") })
	if err != nil {
		emuErr = err
		return nil
	}
	emuAddr = addr
	admin, err = azblob.NewClientFromConnectionString(connString(addr), nil)
	if err != nil {
		emuErr = err
	}
	return srv
}

func connString(addr string) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=http://%s/%s;", account, accountKey, addr, account)
}

func serviceURL(addr string) string { return "http://" + addr + "/" + account }

// needEmulator skips the test when Azurite is not installed and fails it
// when it is but did not start.
func needEmulator(t *testing.T) {
	t.Helper()
	switch {
	case emuErr != nil:
		t.Fatalf("azurite: %v", emuErr)
	case emuSkip != "":
		t.Skip(emuSkip)
	}
}

var containerSeq atomic.Int64

// newContainer creates a container holding blobs (key -> content) and
// returns its name.
func newContainer(t *testing.T, blobs map[string][]byte) string {
	t.Helper()
	needEmulator(t)
	name := fmt.Sprintf("scand-test-%d", containerSeq.Add(1))
	if _, err := admin.CreateContainer(context.Background(), name, nil); err != nil {
		t.Fatalf("create container %s: %v", name, err)
	}
	for key, data := range blobs {
		put(t, name, key, data)
	}
	return name
}

func put(t *testing.T, ctr, key string, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.UploadBuffer(ctx, ctr, key, data, nil); err != nil {
		t.Fatalf("upload az://%s/%s: %v", ctr, key, err)
	}
}

// newBackend returns the backend under test talking to addr (Azurite when
// ""), with the account key unless cfg has credentials of its own.
func newBackend(t *testing.T, addr string, cfg azure.Config) *azure.Bucket {
	t.Helper()
	needEmulator(t)
	if addr == "" {
		addr = emuAddr
	}
	cfg.Account = account
	cfg.Endpoint = serviceURL(addr)
	if cfg.Key == "" && cfg.SAS == "" && !cfg.Anonymous {
		cfg.Key = accountKey
	}
	b, err := azure.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("azure.New: %v", err)
	}
	return b
}
