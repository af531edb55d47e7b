package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// IsPattern reports whether name holds glob syntax or names a directory
// (trailing slash), that is whether Expand may return more than one object.
func IsPattern(name string) bool {
	return strings.HasSuffix(name, "/") || strings.ContainsAny(name, "*?[")
}

// Expand resolves one request path into the objects it names:
//   - "dir/" (a trailing slash) is every object below dir, and a glob with a
//     trailing slash ("events/2026-*/") every object below the directories
//     it matches;
//   - a glob ("events/2026-*/part-*.parquet") is every object matching it,
//     where "*", "?" and "[...]" match within one path segment (path.Match)
//     and a "**" segment matches any number of segments;
//   - anything else is one object, which must exist.
//
// Objects found by listing skip names where any segment below the listed
// prefix starts with "." or "_" (such as _SUCCESS markers and .crc files),
// as Spark and pyarrow datasets do. Results are in lexical order. A pattern
// that matches nothing fails with an error wrapping fs.ErrNotExist.
func Expand(ctx context.Context, b Bucket, name string) ([]Info, error) {
	name, err := Canonical(b, name)
	if err != nil {
		return nil, err
	}
	if !IsPattern(name) {
		info, err := b.Stat(ctx, name)
		if err != nil {
			return nil, err
		}
		return []Info{info}, nil
	}
	prefix, pattern := name, ""
	if i := strings.IndexAny(name, "*?["); i >= 0 {
		if i < pathStart(name) {
			// Patterns are matched against names without scheme and
			// bucket (localName), so a glob there would match anything.
			return nil, fmt.Errorf("pattern %q: globs in the scheme or bucket are not supported: %w", name, fs.ErrInvalid)
		}
		prefix = name[:strings.LastIndex(name[:i], "/")+1]
		pattern = name
		if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w: %w", name, err, fs.ErrInvalid)
		}
	}
	var segs []string
	if pattern != "" {
		segs = strings.Split(localName(pattern), "/")
		if segs[len(segs)-1] == "" {
			// "events/2026-*/" names every object below the matching
			// directories, as "dir/" does for one directory.
			segs = append(segs[:len(segs)-1], "*", "**")
		}
	}
	var out []Info
	err = b.ListPruned(ctx, listPrefix(name), pruning(prefix, segs), func(info Info) error {
		out = append(out, info)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no files match %q: %w", name, fs.ErrNotExist)
	}
	return out, nil
}

// listPrefix is what Expand lists for name: up to its first glob
// character ("a/b*/c" lists "a/b"), all of it for a directory ("dir/").
func listPrefix(name string) string {
	if i := strings.IndexAny(name, "*?["); i >= 0 {
		return name[:i]
	}
	return name
}

// pruning is what Expand wants from a listing below prefix (a directory
// name, "" or ending in "/"): names that are not hidden below prefix and
// match the pattern's segments (all names when segs is nil), and only the
// directories that can hold such names. Pruning by name means that a
// local bucket stats only the files a glob matches, and never walks a
// directory whose segment the glob cannot match.
func pruning(prefix string, segs []string) Pruning {
	base := localName(prefix)
	return Pruning{
		Dir: func(dir string) bool {
			rel := strings.TrimPrefix(localName(dir), base)
			if hidden(strings.TrimSuffix(rel, "/")) {
				return false
			}
			return segs == nil || dirCanMatch(segs, strings.Split(strings.TrimSuffix(localName(dir), "/"), "/"))
		},
		Object: func(name string) bool {
			if HiddenBelow(prefix, name) {
				return false
			}
			return segs == nil || matchSegments(segs, strings.Split(localName(name), "/"))
		},
	}
}

// dirCanMatch reports whether some name below the directory whose
// segments are dir can match pattern. Up to the pattern's first "**" each
// pattern segment matches exactly one name segment, so no backtracking is
// needed: a "**" reached within dir can absorb whatever follows.
func dirCanMatch(pattern, dir []string) bool {
	p := 0
	for _, seg := range dir {
		if p < len(pattern) && pattern[p] == "**" {
			return true
		}
		if p >= len(pattern) || !matchSegment(pattern[p], seg) {
			return false
		}
		p++
	}
	// A name below dir has at least one more segment.
	return p < len(pattern)
}

// localName strips a URI scheme and authority, so that patterns and names
// from object stores compare the same way as local paths.
func localName(name string) string {
	if strings.Contains(name, "://") {
		return name[pathStart(name):]
	}
	return strings.TrimPrefix(name, "./")
}

// pathStart returns where the path of a URI begins, after "scheme://bucket/"
// (len(name) when there is none), and 0 for a name without a scheme.
func pathStart(name string) int {
	i := strings.Index(name, "://")
	if i < 0 {
		return 0
	}
	if j := strings.IndexByte(name[i+3:], '/'); j >= 0 {
		return i + 3 + j + 1
	}
	return len(name)
}

// HiddenBelow reports whether a listed name has a segment below the
// listed prefix that starts with "." or "_" (a _SUCCESS marker, a .crc
// file, a _temporary directory): Expand skips such names, and so should
// every listing meant for users.
func HiddenBelow(prefix, name string) bool {
	return hidden(strings.TrimPrefix(localName(name), localName(prefix)))
}

func hidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

// matchSegments reports whether the name's segments match the pattern's,
// where a "**" segment matches any number of name segments. It backtracks
// only to the last "**" seen (each other segment matches exactly one name
// segment, so that is enough), which keeps it O(len(pattern)*len(name)): a
// naive recursion is exponential in the number of "**" and a request could
// use it to pin a CPU.
func matchSegments(pattern, name []string) bool {
	p, n := 0, 0
	star, starN := -1, 0 // the last "**" and the name segment it resumes at
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == "**":
			star, starN = p, n
			p++
		case p < len(pattern) && matchSegment(pattern[p], name[n]):
			p++
			n++
		case star >= 0:
			// Let the last "**" swallow one more segment and retry.
			starN++
			p, n = star+1, starN
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == "**" {
		p++
	}
	return p == len(pattern)
}

func matchSegment(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// Mux routes names to backends by URI scheme: "s3://..." to the bucket
// registered for "s3", anything without a scheme to Default.
type Mux struct {
	Default Bucket
	schemes map[string]Bucket
}

// Handle registers the bucket that serves names of the given scheme.
func (m *Mux) Handle(scheme string, b Bucket) {
	if m.schemes == nil {
		m.schemes = map[string]Bucket{}
	}
	m.schemes[scheme] = b
}

func (m *Mux) route(name string) (Bucket, error) {
	i := strings.Index(name, "://")
	if i < 0 {
		if m.Default == nil {
			return nil, &NoBackendError{Name: name}
		}
		return m.Default, nil
	}
	scheme := name[:i]
	if b, ok := m.schemes[scheme]; ok {
		return b, nil
	}
	return nil, &NoBackendError{Name: name, Scheme: scheme}
}

// Stat implements Bucket.
func (m *Mux) Stat(ctx context.Context, name string) (Info, error) {
	b, err := m.route(name)
	if err != nil {
		return Info{}, err
	}
	return b.Stat(ctx, name)
}

// Open implements Bucket.
func (m *Mux) Open(ctx context.Context, info Info) (Object, error) {
	b, err := m.route(info.Name)
	if err != nil {
		return nil, err
	}
	return b.Open(ctx, info)
}

// List implements Bucket.
func (m *Mux) List(ctx context.Context, prefix string, fn func(Info) error) error {
	b, err := m.route(prefix)
	if err != nil {
		return err
	}
	return b.List(ctx, prefix, fn)
}

// ListPruned implements Bucket.
func (m *Mux) ListPruned(ctx context.Context, prefix string, p Pruning, fn func(Info) error) error {
	b, err := m.route(prefix)
	if err != nil {
		return err
	}
	return b.ListPruned(ctx, prefix, p, fn)
}

// Canonical implements Bucket.
func (m *Mux) Canonical(name string) (string, error) {
	b, err := m.route(name)
	if err != nil {
		return name, nil // Expand's own checks and Stat say what is wrong
	}
	return b.Canonical(name)
}

// Canonical returns b's canonical spelling of name (Bucket.Canonical).
func Canonical(b Bucket, name string) (string, error) { return b.Canonical(name) }

// IsNotFound reports whether err means a missing object.
func IsNotFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }
