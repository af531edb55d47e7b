// Package storagetest checks that a storage.Bucket keeps the contract
// written in package storage, and provides fakes for tests above storage:
// Mem, an in-memory Bucket, and WithReadHook, which counts reads or injects
// failures.
//
// Every backend runs the same acceptance suite from its own tests:
//
//	func TestAcceptance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T, objects map[string][]byte) storage.Bucket {
//			return newBucketHolding(t, objects)
//		})
//	}
//
// The suite names objects by the keys it passes to the Harness ("a.bin",
// "dir/sub/part-2.parquet") and expects Info.Name to be that key. A backend
// whose names are URIs runs it through a wrapper that adds and strips its
// "scheme://bucket/" prefix.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/scand/scand/storage"
)

// Harness returns a bucket holding exactly objects (name -> content). It
// registers any cleanup with t.
type Harness func(t *testing.T, objects map[string][]byte) storage.Bucket

// fixtureSizes is the tree every test starts from. It holds hidden names
// (_SUCCESS, .crc, _tmp/), a hidden top-level directory, files at several
// depths, a file and a directory sharing a stem ("dir/sub.parquet" sorts
// before "dir/sub/...", though a directory walk visits "sub" first), and a
// sibling "dir2" that a "dir" prefix must include and "dir/" must not.
var fixtureSizes = map[string]int{
	"top.parquet":                   10,
	"big.bin":                       100_003,
	"empty":                         0,
	"dir/part-0.parquet":            101,
	"dir/part-1.parquet":            102,
	"dir/part-a.parquet":            103,
	"dir/part-b.parquet":            104,
	"dir/other.csv":                 5,
	"dir/sub.parquet":               6,
	"dir/sub/part-2.parquet":        7,
	"dir/sub/deeper/part-3.parquet": 8,
	"dir/_SUCCESS":                  0,
	"dir/.part-0.parquet.crc":       12,
	"dir/_tmp/part-9.parquet":       9,
	"dir2/x.parquet":                11,
	"_staging/p.parquet":            13,
}

// Content returns the deterministic bytes of a test object: distinct for
// every name and offset, so a read from the wrong place shows.
func Content(name string, size int) []byte {
	var seed byte
	for i := 0; i < len(name); i++ {
		seed = seed*31 + name[i]
	}
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7+i>>8) ^ seed
	}
	return b
}

func fixture() map[string][]byte {
	objects := map[string][]byte{}
	for name, size := range fixtureSizes {
		objects[name] = Content(name, size)
	}
	return objects
}

func sortedNames(objects map[string][]byte) []string {
	var names []string
	for name := range objects {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Run runs the acceptance suite against the buckets h makes.
func Run(t *testing.T, h Harness) {
	t.Run("Stat", func(t *testing.T) { testStat(t, h) })
	t.Run("ReadAt", func(t *testing.T) { testReadAt(t, h) })
	t.Run("ReadAtEmpty", func(t *testing.T) { testReadAtEmpty(t, h) })
	t.Run("ReadAtConcurrent", func(t *testing.T) { testReadAtConcurrent(t, h) })
	t.Run("ReadAtCancelled", func(t *testing.T) { testReadAtCancelled(t, h) })
	t.Run("Open", func(t *testing.T) { testOpen(t, h) })
	t.Run("List", func(t *testing.T) { testList(t, h) })
	t.Run("ListStops", func(t *testing.T) { testListStops(t, h) })
	t.Run("ListedVersionsOpen", func(t *testing.T) { testListedVersionsOpen(t, h) })
	t.Run("Expand", func(t *testing.T) { testExpand(t, h) })
	t.Run("ReadSpans", func(t *testing.T) { testReadSpans(t, h) })
	t.Run("Recheck", func(t *testing.T) { testRecheck(t, h) })
	t.Run("ListPruned", func(t *testing.T) { testListPruned(t, h) })
	t.Run("Canonical", func(t *testing.T) { testCanonical(t, h) })
}

func testStat(t *testing.T, h Harness) {
	ctx := context.Background()
	objects := fixture()
	b := h(t, objects)
	for _, name := range sortedNames(objects) {
		info, err := b.Stat(ctx, name)
		if err != nil {
			t.Errorf("Stat(%q): %v", name, err)
			continue
		}
		if info.Name != name {
			t.Errorf("Stat(%q).Name = %q", name, info.Name)
		}
		if info.Size != int64(len(objects[name])) {
			t.Errorf("Stat(%q).Size = %d, want %d", name, info.Size, len(objects[name]))
		}
		if info.Version == "" {
			t.Errorf("Stat(%q).Version is empty", name)
		}
	}
	for _, name := range []string{"missing", "dir/missing.parquet", "nodir/x.parquet", "top.parquet/x"} {
		if _, err := b.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want fs.ErrNotExist", name, err)
		}
	}
	for _, name := range []string{"..", "../x", "a/../../x", "/etc/passwd"} {
		if _, err := b.Stat(ctx, name); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Stat(%q) = %v, want fs.ErrPermission", name, err)
		}
	}
}

func open(t *testing.T, b storage.Bucket, name string) storage.Object {
	t.Helper()
	ctx := context.Background()
	info, err := b.Stat(ctx, name)
	if err != nil {
		t.Fatalf("Stat(%q): %v", name, err)
	}
	o, err := b.Open(ctx, info)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func testReadAt(t *testing.T, h Harness) {
	const name = "big.bin"
	objects := fixture()
	want := objects[name]
	size := int64(len(want))
	o := open(t, h(t, objects), name)
	if got := o.Info(); got.Size != size || got.Version == "" || got.Name != name {
		t.Errorf("Info() = %+v, want name %q, size %d and a version", got, name, size)
	}
	tests := map[string]struct {
		off     int64
		n       int
		wantErr error // nil: the bytes must match
	}{
		"whole object":            {off: 0, n: int(size)},
		"first byte":              {off: 0, n: 1},
		"middle slice":            {off: 1000, n: 4096},
		"last byte":               {off: size - 1, n: 1},
		"tail to end":             {off: size - 100, n: 100},
		"zero length at start":    {off: 0, n: 0},
		"zero length in middle":   {off: 500, n: 0},
		"zero length at end":      {off: size, n: 0},
		"runs past end":           {off: size - 10, n: 20, wantErr: io.ErrUnexpectedEOF},
		"whole object plus one":   {off: 0, n: int(size) + 1, wantErr: io.ErrUnexpectedEOF},
		"at end":                  {off: size, n: 1, wantErr: io.EOF},
		"after end":               {off: size + 1000, n: 10, wantErr: io.EOF},
		"negative offset":         {off: -1, n: 10, wantErr: errAny},
		"negative offset, 0 long": {off: -5, n: 0, wantErr: errAny},
	}
	for tname, tt := range tests {
		t.Run(tname, func(t *testing.T) {
			p := make([]byte, tt.n)
			err := o.ReadAt(context.Background(), p, tt.off)
			switch {
			case tt.wantErr == nil:
				if err != nil {
					t.Fatalf("ReadAt(%d bytes at %d) = %v", tt.n, tt.off, err)
				}
				if !bytes.Equal(p, want[tt.off:tt.off+int64(tt.n)]) {
					t.Fatalf("ReadAt(%d bytes at %d) read the wrong bytes", tt.n, tt.off)
				}
			case tt.wantErr == errAny:
				if err == nil {
					t.Fatalf("ReadAt(%d bytes at %d) = nil, want an error", tt.n, tt.off)
				}
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("ReadAt(%d bytes at %d) = %v, want %v", tt.n, tt.off, err, tt.wantErr)
			}
		})
	}
}

// errAny in a table means "any non-nil error".
var errAny = errors.New("any error")

func testReadAtEmpty(t *testing.T, h Harness) {
	o := open(t, h(t, fixture()), "empty")
	ctx := context.Background()
	if o.Info().Size != 0 {
		t.Errorf("Info().Size = %d, want 0", o.Info().Size)
	}
	if err := o.ReadAt(ctx, nil, 0); err != nil {
		t.Errorf("ReadAt(0 bytes at 0) = %v, want nil", err)
	}
	if err := o.ReadAt(ctx, make([]byte, 1), 0); !errors.Is(err, io.EOF) {
		t.Errorf("ReadAt(1 byte at 0) = %v, want io.EOF", err)
	}
}

func testReadAtConcurrent(t *testing.T, h Harness) {
	const name = "big.bin"
	objects := fixture()
	want := objects[name]
	o := open(t, h(t, objects), name)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 50 {
				off := r.IntN(len(want))
				n := r.IntN(min(len(want)-off, 8192) + 1)
				p := make([]byte, n)
				if err := o.ReadAt(context.Background(), p, int64(off)); err != nil {
					errs <- fmt.Errorf("ReadAt(%d bytes at %d): %v", n, off, err)
					return
				}
				if !bytes.Equal(p, want[off:off+n]) {
					errs <- fmt.Errorf("ReadAt(%d bytes at %d) read the wrong bytes", n, off)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testReadAtCancelled(t *testing.T, h Harness) {
	o := open(t, h(t, fixture()), "big.bin")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.ReadAt(ctx, make([]byte, 10), 0); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadAt with a cancelled ctx = %v, want context.Canceled", err)
	}
}

func testOpen(t *testing.T, h Harness) {
	ctx := context.Background()
	objects := fixture()
	b := h(t, objects)
	const name = "dir/part-0.parquet"
	info, err := b.Stat(ctx, name)
	if err != nil {
		t.Fatalf("Stat(%q): %v", name, err)
	}

	// Without a version, Open takes whatever is there and completes Info.
	o, err := b.Open(ctx, storage.Info{Name: name})
	if err != nil {
		t.Fatalf("Open(%q) without a version: %v", name, err)
	}
	if got := o.Info(); got.Size != info.Size || got.Version != info.Version {
		t.Errorf("Open(%q).Info() = %+v, want size %d and version %q", name, got, info.Size, info.Version)
	}
	if err := o.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	stale := info
	stale.Version = "stale-" + info.Version
	if err := openAndRead(ctx, b, stale); !errors.Is(err, storage.ErrChanged) {
		t.Errorf("Open(%q) with a stale version, then ReadAt = %v, want storage.ErrChanged", name, err)
	}
	if o, err := b.Open(ctx, storage.Info{Name: "dir/missing.parquet"}); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			o.Close()
		}
		t.Errorf("Open(missing) = %v, want fs.ErrNotExist", err)
	}
	if o, err := b.Open(ctx, storage.Info{Name: "../x"}); !errors.Is(err, fs.ErrPermission) {
		if err == nil {
			o.Close()
		}
		t.Errorf("Open(../x) = %v, want fs.ErrPermission", err)
	}
}

func list(t *testing.T, b storage.Bucket, prefix string) []string {
	t.Helper()
	names := []string{}
	err := b.List(context.Background(), prefix, func(info storage.Info) error {
		names = append(names, info.Name)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return names
}

func testList(t *testing.T, h Harness) {
	objects := fixture()
	b := h(t, objects)
	all := sortedNames(objects)
	for _, prefix := range []string{"", "dir/", "dir", "dir/pa", "dir/part-", "dir/sub", "dir/sub/", "dir/_", "top.parquet", "_staging/", "nothing/", "nothing", "dir/zzz"} {
		t.Run(fmt.Sprintf("%q", prefix), func(t *testing.T) {
			want := []string{}
			for _, name := range all {
				if strings.HasPrefix(name, prefix) {
					want = append(want, name)
				}
			}
			if got := list(t, b, prefix); !slices.Equal(got, want) {
				t.Errorf("List(%q) =\n\t%q\nwant\n\t%q", prefix, got, want)
			}
		})
	}
}

func testListStops(t *testing.T, h Harness) {
	b := h(t, fixture())
	stop := errors.New("stop")
	calls := 0
	err := b.List(context.Background(), "dir/", func(storage.Info) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) {
		t.Errorf("List = %v, want fn's error", err)
	}
	if calls != 1 {
		t.Errorf("fn called %d times after returning an error, want 1", calls)
	}
}

// testListedVersionsOpen checks that List reports the size and version Stat
// does, so files planned from a listing (Expand) open without ErrChanged.
func testListedVersionsOpen(t *testing.T, h Harness) {
	ctx := context.Background()
	objects := fixture()
	b := h(t, objects)
	var infos []storage.Info
	if err := b.List(ctx, "", func(info storage.Info) error {
		infos = append(infos, info)
		return nil
	}); err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(infos) != len(objects) {
		t.Errorf("List found %d objects, want %d", len(infos), len(objects))
	}
	for _, info := range infos {
		if info.Size != int64(len(objects[info.Name])) {
			t.Errorf("List: %q has size %d, want %d", info.Name, info.Size, len(objects[info.Name]))
		}
		st, err := b.Stat(ctx, info.Name)
		if err != nil {
			t.Errorf("Stat(%q): %v", info.Name, err)
		} else if st.Version != info.Version {
			t.Errorf("%q: List version %q, Stat version %q", info.Name, info.Version, st.Version)
		}
		o, err := b.Open(ctx, info)
		if err != nil {
			t.Errorf("Open(%q) with its listed Info: %v", info.Name, err)
			continue
		}
		o.Close()
	}
}

func testExpand(t *testing.T, h Harness) {
	b := h(t, fixture())
	belowDir := []string{
		"dir/other.csv", "dir/part-0.parquet", "dir/part-1.parquet", "dir/part-a.parquet", "dir/part-b.parquet",
		"dir/sub.parquet", "dir/sub/deeper/part-3.parquet", "dir/sub/part-2.parquet",
	}
	parquetBelowDir := []string{
		"dir/part-0.parquet", "dir/part-1.parquet", "dir/part-a.parquet", "dir/part-b.parquet",
		"dir/sub.parquet", "dir/sub/deeper/part-3.parquet", "dir/sub/part-2.parquet",
	}
	tests := []struct {
		pattern string
		want    []string
		wantErr error
	}{
		{pattern: "top.parquet", want: []string{"top.parquet"}},
		{pattern: "empty", want: []string{"empty"}},
		// Hidden names are skipped only when found by listing.
		{pattern: "dir/_SUCCESS", want: []string{"dir/_SUCCESS"}},
		{pattern: "dir/.part-0.parquet.crc", want: []string{"dir/.part-0.parquet.crc"}},
		{pattern: "dir/", want: belowDir},
		{pattern: "dir/sub/", want: []string{"dir/sub/deeper/part-3.parquet", "dir/sub/part-2.parquet"}},
		{pattern: "dir/*.parquet", want: []string{
			"dir/part-0.parquet", "dir/part-1.parquet", "dir/part-a.parquet", "dir/part-b.parquet", "dir/sub.parquet",
		}},
		{pattern: "dir/part-?.parquet", want: []string{
			"dir/part-0.parquet", "dir/part-1.parquet", "dir/part-a.parquet", "dir/part-b.parquet",
		}},
		{pattern: "dir/part-[ab].parquet", want: []string{"dir/part-a.parquet", "dir/part-b.parquet"}},
		{pattern: "dir/part-[0-9].parquet", want: []string{"dir/part-0.parquet", "dir/part-1.parquet"}},
		{pattern: "dir/part-[^0-9].parquet", want: []string{"dir/part-a.parquet", "dir/part-b.parquet"}},
		{pattern: "dir/*/part-*.parquet", want: []string{"dir/sub/part-2.parquet"}},
		{pattern: "dir/**/*.parquet", want: parquetBelowDir},
		{pattern: "dir/**", want: belowDir},
		{pattern: "dir/**/", want: belowDir},
		{pattern: "dir/*/", want: []string{"dir/sub/deeper/part-3.parquet", "dir/sub/part-2.parquet"}},
		{pattern: "dir/**/deeper/*", want: []string{"dir/sub/deeper/part-3.parquet"}},
		{pattern: "dir/**/**/part-3.parquet", want: []string{"dir/sub/deeper/part-3.parquet"}},
		{pattern: "**/part-3.parquet", want: []string{"dir/sub/deeper/part-3.parquet"}},
		{pattern: "**/part-[23].parquet", want: []string{"dir/sub/deeper/part-3.parquet", "dir/sub/part-2.parquet"}},
		{pattern: "*", want: []string{"big.bin", "empty", "top.parquet"}},
		{pattern: "*/x.parquet", want: []string{"dir2/x.parquet"}},
		{pattern: "dir?/*", want: []string{"dir2/x.parquet"}},
		{pattern: "**", want: append(append([]string{"big.bin"}, belowDir...), "dir2/x.parquet", "empty", "top.parquet")},
		// A hidden directory named before the glob is not skipped; one the
		// glob finds is.
		{pattern: "_staging/", want: []string{"_staging/p.parquet"}},
		{pattern: "_staging/*.parquet", want: []string{"_staging/p.parquet"}},
		{pattern: "dir/_*", wantErr: fs.ErrNotExist},
		{pattern: "dir/_tmp/*", want: []string{"dir/_tmp/part-9.parquet"}},
		{pattern: "dir/*/part-9.parquet", wantErr: fs.ErrNotExist},
		{pattern: "missing.parquet", wantErr: fs.ErrNotExist},
		{pattern: "nothing/", wantErr: fs.ErrNotExist},
		{pattern: "nothing/*.parquet", wantErr: fs.ErrNotExist},
		{pattern: "dir/*.orc", wantErr: fs.ErrNotExist},
		{pattern: "dir/part-?", wantErr: fs.ErrNotExist},
		{pattern: "[", wantErr: fs.ErrInvalid},
		{pattern: "dir/[", wantErr: fs.ErrInvalid},
		{pattern: "dir/part-[0-9", wantErr: fs.ErrInvalid},
		{pattern: "dir/*/[", wantErr: fs.ErrInvalid},
		{pattern: "**/[", wantErr: fs.ErrInvalid},
		{pattern: "dir/*\\", wantErr: fs.ErrInvalid},
		{pattern: "*://b/x", wantErr: fs.ErrInvalid},
		{pattern: "s3://b*/x", wantErr: fs.ErrInvalid},
	}
	objects := fixture()
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.pattern), func(t *testing.T) {
			infos, err := storage.Expand(context.Background(), b, tt.pattern)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Expand(%q) = %v, %v; want %v", tt.pattern, names(infos), err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expand(%q): %v", tt.pattern, err)
			}
			if got := names(infos); !slices.Equal(got, tt.want) {
				t.Errorf("Expand(%q) =\n\t%q\nwant\n\t%q", tt.pattern, got, tt.want)
			}
			for _, info := range infos {
				if info.Size != int64(len(objects[info.Name])) || info.Version == "" {
					t.Errorf("Expand(%q): %+v, want size %d and a version", tt.pattern, info, len(objects[info.Name]))
				}
			}
		})
	}
}

func names(infos []storage.Info) []string {
	out := []string{}
	for _, info := range infos {
		out = append(out, info.Name)
	}
	return out
}

// openAndRead opens info and reads its first byte: a store may find a
// changed version at Open or, when it trusts a known size and version, at
// the first read.
func openAndRead(ctx context.Context, b storage.Bucket, info storage.Info) error {
	o, err := b.Open(ctx, info)
	if err != nil {
		return err
	}
	defer o.Close()
	return o.ReadAt(ctx, make([]byte, 1), 0)
}

// testReadSpans checks ReadSpans, whatever the object declares: the spans
// hold the right bytes, and failures are the ReadAt contract's, never
// errors.ErrUnsupported.
func testReadSpans(t *testing.T, h Harness) {
	const name = "big.bin"
	objects := fixture()
	want := objects[name]
	size := int64(len(want))
	o := open(t, h(t, objects), name)
	caps := o.Capabilities()
	if again := o.Capabilities(); again != caps {
		t.Errorf("Capabilities changed between calls: %+v, then %+v", caps, again)
	}
	ctx := context.Background()
	var spans []storage.Span
	for off := int64(7); off+3000 <= size; off += 9000 {
		spans = append(spans, storage.Span{Off: off, Buf: make([]byte, 3000)})
	}
	if err := o.ReadSpans(ctx, spans); err != nil {
		t.Fatalf("ReadSpans (capabilities %+v): %v", caps, err)
	}
	for _, sp := range spans {
		if !bytes.Equal(sp.Buf, want[sp.Off:sp.Off+int64(len(sp.Buf))]) {
			t.Fatalf("ReadSpans: the span at %d holds the wrong bytes", sp.Off)
		}
	}
	if err := o.ReadSpans(ctx, nil); err != nil {
		t.Errorf("ReadSpans(no spans) = %v", err)
	}
	past := []storage.Span{{Off: 0, Buf: make([]byte, 10)}, {Off: size - 5, Buf: make([]byte, 10)}}
	if err := o.ReadSpans(ctx, past); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ReadSpans past the end = %v, want io.ErrUnexpectedEOF", err)
	}
	overlapping := []storage.Span{{Off: 100, Buf: make([]byte, 10)}, {Off: 105, Buf: make([]byte, 10)}}
	if err := o.ReadSpans(ctx, overlapping); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadSpans of overlapping spans = %v, want fs.ErrInvalid", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := o.ReadSpans(cancelled, spans[:1]); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadSpans with a cancelled ctx = %v, want context.Canceled", err)
	}
}

// testRecheck checks that an object nobody changed passes Recheck.
func testRecheck(t *testing.T, h Harness) {
	o := open(t, h(t, fixture()), "dir/part-0.parquet")
	ctx := context.Background()
	if err := o.ReadAt(ctx, make([]byte, 10), 0); err != nil {
		t.Fatal(err)
	}
	if err := o.Recheck(ctx); err != nil {
		t.Errorf("Recheck of an unchanged object = %v", err)
	}
}

// testListPruned checks that ListPruned reports exactly the objects List
// does that the pruning wants, and that a refused directory hides all
// below it.
func testListPruned(t *testing.T, h Harness) {
	objects := fixture()
	b := h(t, objects)
	all := list(t, b, "")
	for _, tc := range []struct {
		prefix string
		p      storage.Pruning
	}{
		{"", storage.Pruning{}},
		{"", storage.Pruning{Object: func(name string) bool { return strings.HasSuffix(name, ".parquet") }}},
		{"dir/", storage.Pruning{Dir: func(dir string) bool { return dir != "dir/sub/" }}},
		{"dir/p", storage.Pruning{Dir: func(string) bool { return false }}},
		{"", storage.Pruning{
			Dir:    func(dir string) bool { return !strings.HasPrefix(dir, "_") && !strings.Contains(dir, "/_") },
			Object: func(name string) bool { return !strings.HasPrefix(path.Base(name), ".") },
		}},
	} {
		want := []string{}
		for _, name := range all {
			if strings.HasPrefix(name, tc.prefix) && tc.p.Wants(tc.prefix, name) {
				want = append(want, name)
			}
		}
		got := []string{}
		err := b.ListPruned(context.Background(), tc.prefix, tc.p, func(info storage.Info) error {
			if info.Size != int64(len(objects[info.Name])) || info.Version == "" {
				t.Errorf("ListPruned(%q): %+v, want size %d and a version", tc.prefix, info, len(objects[info.Name]))
			}
			got = append(got, info.Name)
			return nil
		})
		if err != nil {
			t.Errorf("ListPruned(%q): %v", tc.prefix, err)
		} else if !slices.Equal(got, want) {
			t.Errorf("ListPruned(%q) =\n\t%q\nwant\n\t%q", tc.prefix, got, want)
		}
	}
}

// testCanonical checks that listed names are their own canonical
// spelling, so that patterns built from them match.
func testCanonical(t *testing.T, h Harness) {
	b := h(t, fixture())
	for _, name := range list(t, b, "dir/") {
		if got, err := b.Canonical(name); err != nil || got != name {
			t.Errorf("Canonical(%q) = %q, %v; want the name itself", name, got, err)
		}
	}
}
