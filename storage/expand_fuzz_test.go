package storage_test

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scand/scand/storage"
	"github.com/scand/scand/storage/storagetest"
)

// meta are the characters that make a name a glob for path.Match.
const meta = `*?[\`

var patternSeeds = []string{
	"", "*", "**", "*/", "**/", "dir/", "dir", "dir/*.parquet", "dir/part-?.parquet", "dir/part-[ab].parquet",
	"dir/part-[^0-9].parquet", "dir/**/*.parquet", "**/part-3.parquet", "dir/**/**/deeper/*", "dir/*/",
	"dir/_*", "_staging/", "[", "dir/[", "dir/[a-", `dir/\`, `dir/\*`, "a]", "../*", "/abs/*", "./dir/*",
	"s3://b/*", "s3://b/dir/", "dir//*", "dir/*/../*", "**/**/**/**/**/**/**/**/x", "dir\x00/*",
}

// naiveMatch is the obvious recursive definition of matchSegments, which
// is exponential in the number of "**": the reference for small inputs.
func naiveMatch(pattern, name []string) bool {
	if len(pattern) == 0 {
		return len(name) == 0
	}
	if pattern[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if naiveMatch(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pattern[0], name[0])
	return ok && naiveMatch(pattern[1:], name[1:])
}

func FuzzMatchSegments(f *testing.F) {
	for _, p := range patternSeeds {
		f.Add(p, "dir/sub/deeper/part-3.parquet")
		f.Add(p, p)
	}
	f.Add("a/**/b/**/c", "a/x/b/y/b/c")
	f.Add("**/*/**", "a")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
		if len(ps) > 10 || len(ns) > 10 {
			return // keep the naive reference fast
		}
		got := storage.MatchSegments(ps, ns)
		if want := naiveMatch(ps, ns); got != want {
			t.Fatalf("MatchSegments(%q, %q) = %v, the naive matcher says %v", pattern, name, got, want)
		}
		if !strings.ContainsAny(pattern, meta) && got != (pattern == name) {
			t.Fatalf("MatchSegments(%q, %q) = %v: a pattern without meta characters must match only itself", pattern, name, got)
		}
		if !strings.ContainsAny(name, meta) && !storage.MatchSegments(ns, ns) {
			t.Fatalf("%q does not match itself", name)
		}
	})
}

// TestMatchSegmentsManyStars guards against an exponential matcher: a
// request can hold any number of "**".
func TestMatchSegmentsManyStars(t *testing.T) {
	pattern := strings.Split(strings.Repeat("**/*/", 30)+"nomatch", "/")
	name := strings.Split(strings.Repeat("d/", 60)+"x", "/")
	start := time.Now()
	if storage.MatchSegments(pattern, name) {
		t.Errorf("matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

var fuzzObjects = map[string][]byte{
	"top.parquet":                   []byte("t"),
	"dir/part-0.parquet":            []byte("0"),
	"dir/part-a.parquet":            []byte("a"),
	"dir/_SUCCESS":                  nil,
	"dir/.part-0.parquet.crc":       []byte("c"),
	"dir/sub/deeper/part-3.parquet": []byte("3"),
	"dir/_tmp/part-9.parquet":       []byte("9"),
	"_staging/p.parquet":            []byte("p"),
	"a*b/[x]?.parquet":              []byte("m"), // names may hold meta characters
}

func hiddenBelow(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

func FuzzExpand(f *testing.F) {
	for _, p := range patternSeeds {
		f.Add(p)
	}
	for name := range fuzzObjects {
		f.Add(name)
	}
	b := storagetest.NewMem(fuzzObjects)
	f.Fuzz(func(t *testing.T, pattern string) {
		infos, err := storage.Expand(context.Background(), b, pattern)
		if err != nil {
			if len(infos) != 0 {
				t.Fatalf("Expand(%q) returned %d results and %v", pattern, len(infos), err)
			}
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, fs.ErrPermission) {
				t.Fatalf("Expand(%q) = %v, want not found, invalid or permission", pattern, err)
			}
		}
		var names []string
		for _, info := range infos {
			if _, ok := fuzzObjects[info.Name]; !ok {
				t.Fatalf("Expand(%q) returned %q, which does not exist", pattern, info.Name)
			}
			names = append(names, info.Name)
		}
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("Expand(%q) = %q: not sorted and distinct", pattern, names)
		}
		_, exists := fuzzObjects[pattern]
		if !storage.IsPattern(pattern) {
			// One object, named exactly.
			if exists != (err == nil) || exists && (len(names) != 1 || names[0] != pattern) {
				t.Fatalf("Expand(%q) = %q, %v; want exactly that object iff it exists", pattern, names, err)
			}
			return
		}
		if !strings.ContainsAny(pattern, "*?[") {
			// "x/": everything below x that is not hidden ("\" is taken
			// literally here: only a glob is matched with path.Match).
			for name := range fuzzObjects {
				want := strings.HasPrefix(name, pattern) && !hiddenBelow(name[len(pattern):])
				if got := slices.Contains(names, name); got != want {
					t.Fatalf("Expand(%q) = %q: %q included %v, want %v", pattern, names, name, got, want)
				}
			}
			return
		}
		if _, perr := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); perr != nil {
			if !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("Expand(%q) = %v, want fs.ErrInvalid for a malformed pattern", pattern, err)
			}
			return
		}
		// A glob: exactly the objects that match it segment by segment and
		// are not hidden below its literal directory.
		i := strings.IndexAny(pattern, "*?[")
		prefix := pattern[:strings.LastIndex(pattern[:i], "/")+1]
		segs := strings.Split(pattern, "/")
		if segs[len(segs)-1] == "" {
			segs = append(segs[:len(segs)-1], "*", "**")
		}
		if len(segs) > 12 {
			return
		}
		for name := range fuzzObjects {
			want := strings.HasPrefix(name, prefix) && !hiddenBelow(name[len(prefix):]) &&
				naiveMatch(segs, strings.Split(name, "/"))
			if got := slices.Contains(names, name); got != want {
				t.Fatalf("Expand(%q) = %q, %v: %q included %v, want %v", pattern, names, err, name, got, want)
			}
		}
	})
}
