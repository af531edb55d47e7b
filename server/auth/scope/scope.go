package scope

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// ErrBadRoot is wrapped by every error Parse and ParseS3AllowList return.
var ErrBadRoot = errors.New("scope: bad root")

// objectSchemes are the object stores whose names scopes understand:
// S3, Google Cloud Storage and Azure Blob Storage (az://container/path;
// the server turns abfss:// and wasbs:// names into az:// before asking).
var objectSchemes = []string{"s3", "gs", "az"}

// cutScheme splits "scheme://rest" for an object store scheme.
func cutScheme(name string) (scheme, rest string, ok bool) {
	for _, s := range objectSchemes {
		if rest, ok := strings.CutPrefix(name, s+"://"); ok {
			return s, rest, true
		}
	}
	return "", "", false
}

// Scope is a set of roots. The zero Scope allows nothing. A Scope is
// immutable and safe for concurrent use.
type Scope struct {
	roots []root
}

// root is one prefix: local or in an object store, as path segments.
type root struct {
	scheme string   // "" for local names; "s3", "gs" or "az"
	bucket string   // object stores only; "" means every bucket (Everything)
	segs   []string // empty: the whole of --root, or the whole bucket
}

// Everything returns the scope of --auth none: every local name and every
// object store name. Narrow it with Limit when an allow-list (--s3-allow,
// --gcs-allow, --azure-allow) is configured. The identities file has no
// way to write it: there, buckets are named.
func Everything() Scope {
	s := Scope{roots: []root{{}}}
	for _, scheme := range objectSchemes {
		s.roots = append(s.roots, root{scheme: scheme})
	}
	return s
}

// Parse builds a Scope from roots as the identities file writes them.
func Parse(roots []string) (Scope, error) {
	var s Scope
	for _, r := range roots {
		parsed, err := parseRoot(r)
		if err != nil {
			return Scope{}, err
		}
		s.roots = append(s.roots, parsed)
	}
	return s, nil
}

// ParseS3AllowList builds the global S3 allow-list from --s3-allow
// entries, "bucket" or "bucket/prefix" (an "s3://" prefix is accepted too).
func ParseS3AllowList(entries []string) (Scope, error) { return ParseAllowList("s3", entries) }

// ParseAllowList builds the global allow-list of one object store
// ("s3", "gs" or "az") from entries "bucket" or "bucket/prefix" (with or
// without the "scheme://" prefix).
func ParseAllowList(scheme string, entries []string) (Scope, error) {
	var s Scope
	prefix := scheme + "://"
	for _, e := range entries {
		r, err := parseRoot(prefix + strings.TrimPrefix(e, prefix))
		if err != nil {
			return Scope{}, err
		}
		s.roots = append(s.roots, r)
	}
	return s, nil
}

func parseRoot(r string) (root, error) {
	if scheme, rest, ok := cutScheme(r); ok {
		bucket, key, _ := strings.Cut(rest, "/")
		segs, ok := s3Segments(strings.TrimSuffix(key, "/"))
		if bucket == "" || !ok {
			return root{}, fmt.Errorf("%w %q: want %s://bucket or %s://bucket/prefix/, without . or .. segments", ErrBadRoot, r, scheme, scheme)
		}
		return root{scheme: scheme, bucket: bucket, segs: segs}, nil
	}
	if r == "." || r == "./" {
		return root{}, nil
	}
	segs, ok := localSegments(strings.TrimSuffix(r, "/"))
	if !ok || len(segs) == 0 {
		return root{}, fmt.Errorf("%w %q: want a clean path relative to --root (\".\" for all of it) or s3://, gs:// or az://bucket/prefix/", ErrBadRoot, r)
	}
	return root{segs: segs}, nil
}

// Allows reports whether name is inside one of the roots.
func (s Scope) Allows(name string) bool {
	n, ok := parseName(name)
	if !ok {
		return false
	}
	for _, r := range s.roots {
		if r.contains(n) {
			return true
		}
	}
	return false
}

// Filter returns the names s allows, in their order. The server filters
// expanded globs with it so names outside the scope are never revealed.
func (s Scope) Filter(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if s.Allows(n) {
			out = append(out, n)
		}
	}
	return out
}

// LimitS3 returns s with its S3 roots narrowed to what allow also allows;
// local roots are kept as they are. The result allows an S3 name exactly
// when both s and allow do.
func (s Scope) LimitS3(allow Scope) Scope { return s.Limit("s3", allow) }

// Limit returns s with its roots in the object store scheme narrowed to
// what allow also allows; other roots are kept as they are. The result
// allows a name of that store exactly when both s and allow do.
func (s Scope) Limit(scheme string, allow Scope) Scope {
	var out Scope
	for _, r := range s.roots {
		if r.scheme != scheme {
			out.roots = append(out.roots, r)
			continue
		}
		for _, a := range allow.roots {
			switch {
			case a.scheme != scheme:
			case a.contains(r):
				out.roots = append(out.roots, r)
			case r.contains(a):
				out.roots = append(out.roots, a)
			}
		}
	}
	return out
}

// String lists the roots, for logs and error messages.
func (s Scope) String() string {
	parts := make([]string, len(s.roots))
	for i, r := range s.roots {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (r root) String() string {
	if r.scheme != "" && r.bucket == "" {
		return r.scheme + "://*"
	}
	if r.scheme != "" {
		return r.scheme + "://" + r.bucket + "/" + strings.Join(r.segs, "/")
	}
	if len(r.segs) == 0 {
		return "."
	}
	return strings.Join(r.segs, "/")
}

// contains reports whether n (a root or a parsed name) lies inside r.
func (r root) contains(n root) bool {
	if r.scheme != "" && r.bucket == "" {
		return n.scheme == r.scheme
	}
	return r.scheme == n.scheme && r.bucket == n.bucket &&
		len(n.segs) >= len(r.segs) && slices.Equal(r.segs, n.segs[:len(r.segs)])
}

// parseName parses a name the way roots are parsed, but strictly: no
// trailing "/" and no empty local name.
func parseName(name string) (root, bool) {
	if scheme, rest, ok := cutScheme(name); ok {
		bucket, key, found := strings.Cut(rest, "/")
		segs, ok := s3Segments(key)
		return root{scheme: scheme, bucket: bucket, segs: segs}, found && bucket != "" && key != "" && ok
	}
	segs, ok := localSegments(name)
	return root{segs: segs}, ok && len(segs) > 0
}

// localSegments splits a canonical root-relative path; ok is false for
// anything path.Clean would change, absolute paths and other schemes.
func localSegments(p string) ([]string, bool) {
	if p == "" || p == "." || path.Clean(p) != p || strings.HasPrefix(p, "/") ||
		strings.HasPrefix(p, "../") || p == ".." || strings.Contains(p, "://") {
		return nil, false
	}
	return strings.Split(p, "/"), true
}

// s3Segments splits an object key (or prefix) on "/"; ok is false if a
// segment is "." or "..". An empty key has no segments.
func s3Segments(key string) ([]string, bool) {
	if key == "" {
		return nil, true
	}
	segs := strings.Split(key, "/")
	for _, s := range segs {
		if s == "." || s == ".." {
			return nil, false
		}
	}
	return segs, true
}
