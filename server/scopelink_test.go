package server

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/auth/scope"
	"github.com/scand/scand/source/iceberg/icebergtest"
)

// scopedRoot is a --root with alice's own file (100 rows), a secret
// outside her scope (7 rows), and links in her directory: to the secret
// by a relative path, by an absolute path, through a linked directory,
// and one to her own file. The server serves it with every caller
// scoped to alice/.
func scopedRoot(t *testing.T) (flight.Client, string) {
	t.Helper()
	dir := t.TempDir()
	own := sampleRecord(0, 100)
	defer own.Release()
	secret := sampleRecord(1000, 7)
	defer secret.Release()
	writeParquet(t, dir, "alice/own.parquet", own, 50)
	writeParquet(t, dir, "secret/s.parquet", secret, 50)
	for link, to := range map[string]string{
		"alice/link.parquet":  "../secret/s.parquet",
		"alice/abs.parquet":   filepath.Join(dir, "secret", "s.parquet"),
		"alice/linkdir":       "../secret",
		"alice/mine.parquet":  "own.parquet",
		"alice/sub/x.parquet": "../../secret/s.parquet",
	} {
		p := filepath.Join(dir, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := scope.Parse([]string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	scopes := func(string) (scope.Scope, bool) { return sc, true }
	return testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Security: Security{Scopes: scopes}})), dir
}

// A symlink inside a scope that leads out of it reads nothing: named
// directly it is PERMISSION_DENIED (naming the rule), and globs and
// directory scans leave it out, so only the caller's own rows come back.
func TestScopeFollowsSymlinks(t *testing.T) {
	c, _ := scopedRoot(t)
	ctx := context.Background()
	for _, p := range []string{"alice/link.parquet", "alice/abs.parquet", "alice/linkdir/s.parquet", "alice/sub/x.parquet"} {
		_, err := scanJSON(ctx, c, map[string]any{"paths": []string{p}})
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "secret/s.parquet") ||
			!strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: %v, want PermissionDenied naming the link's target", p, err)
		}
	}
	// alice/ holds own.parquet and mine.parquet (a link to it): 200 rows.
	for _, p := range []string{"alice/", "alice/**/*.parquet", "alice/*.parquet", "./alice/"} {
		res, err := scanJSON(ctx, c, map[string]any{"paths": []string{p}})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := res.rows(); got != 200 {
			t.Errorf("%s: %d rows, want 200 (alice's file twice, never the secret's 7)", p, got)
		}
		res.release()
	}
	if _, err := scanJSON(ctx, c, map[string]any{"paths": []string{"alice/linkdir/"}}); status.Code(err) != codes.NotFound {
		t.Errorf("alice/linkdir/: %v, want NotFound (every file in it is outside the scope)", err)
	}
	res, err := scanJSON(ctx, c, map[string]any{"paths": []string{"alice/mine.parquet"}})
	if err != nil {
		t.Fatalf("a link to a file inside the scope: %v", err)
	}
	defer res.release()
	if res.rows() != 100 {
		t.Errorf("alice/mine.parquet: %d rows, want 100", res.rows())
	}
}

// ListFlights never shows a link whose target is outside the scope.
func TestListFlightsHidesLinksOutOfScope(t *testing.T) {
	c, _ := scopedRoot(t)
	for _, prefix := range []string{"alice/", "alice/linkdir/", "alice/sub/"} {
		stream, err := c.ListFlights(context.Background(), &flight.Criteria{Expression: []byte(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			info, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", prefix, err)
			}
			got = append(got, info.FlightDescriptor.Path...)
		}
		for _, name := range got {
			if name != "alice/own.parquet" && name != "alice/mine.parquet" {
				t.Errorf("ListFlights(%q) lists %s, a link out of the scope", prefix, name)
			}
		}
	}
}

// A link retargeted after planning, out of the scope, is not read with
// the ticket planned for it.
func TestScopeLinkSwappedAfterPlanning(t *testing.T) {
	c, dir := scopedRoot(t)
	ctx := context.Background()
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"paths": ["alice/mine.parquet"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "alice/mine.parquet")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret/s.parquet", link); err != nil {
		t.Fatal(err)
	}
	stream, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	var rows int64
	for err == nil {
		var rec *flight.FlightData
		if rec, err = stream.Recv(); err == nil && len(rec.DataBody) > 0 {
			rows++
		}
	}
	if code := status.Code(err); rows > 0 || (code != codes.PermissionDenied && code != codes.FailedPrecondition) {
		t.Errorf("DoGet of a link retargeted out of the scope: %d data messages, %v; want none and PermissionDenied or FailedPrecondition", rows, err)
	}
}

// An Iceberg manifest that is a link out of the caller's scope is not
// read: manifests are opened by the length their list gives, without a
// Stat, and what opening found (the link's target) is checked before the
// manifest is read.
func TestScopeIcebergManifestLinkOut(t *testing.T) {
	dir := t.TempDir()
	tbl, _ := icebergtest.NewTable(t, dir, "alice/wh/t", tableSchema, nil, nil)
	icebergtest.Append(t, tbl, tableArrow, tableRows(0, 100))
	sc, err := scope.Parse([]string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	scopes := func(string) (scope.Scope, bool) { return sc, true }
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Security: Security{Scopes: scopes}}))
	ctx := context.Background()
	res, err := scanJSON(ctx, c, map[string]any{"table": "alice/wh/t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.rows() != 100 {
		t.Fatalf("%d rows, want 100", res.rows())
	}
	res.release()

	// The manifest moves out of the scope, a link to it left in its place.
	var manifests []string
	filepath.WalkDir(filepath.Join(dir, "alice/wh/t"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".avro") && !strings.HasPrefix(d.Name(), "snap-") {
			manifests = append(manifests, p)
		}
		return err
	})
	if len(manifests) != 1 {
		t.Fatalf("manifests %v, want one", manifests)
	}
	out := filepath.Join(dir, "secret", filepath.Base(manifests[0]))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(manifests[0], out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, manifests[0]); err != nil {
		t.Fatal(err)
	}
	// A server of its own: the first one keeps the snapshot's plan.
	c = testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Security: Security{Scopes: scopes}}))
	_, err = scanJSON(ctx, c, map[string]any{"table": "alice/wh/t"})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a manifest linked out of the scope: %v, want PERMISSION_DENIED naming the link", err)
	}
}
