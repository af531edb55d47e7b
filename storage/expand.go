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
//   - "dir/" (a trailing slash) is every object below dir;
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
	if !IsPattern(name) {
		info, err := b.Stat(ctx, name)
		if err != nil {
			return nil, err
		}
		return []Info{info}, nil
	}
	prefix, pattern := name, ""
	if i := strings.IndexAny(name, "*?["); i >= 0 {
		prefix = name[:strings.LastIndex(name[:i], "/")+1]
		pattern = name
		if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w: %w", name, err, fs.ErrInvalid)
		}
	}
	var out []Info
	err := b.List(ctx, prefix, func(info Info) error {
		rest := strings.TrimPrefix(localName(info.Name), localName(prefix))
		if hidden(rest) {
			return nil
		}
		if pattern != "" && !matchSegments(strings.Split(localName(pattern), "/"), strings.Split(localName(info.Name), "/")) {
			return nil
		}
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

// localName strips a URI scheme and authority, so that patterns and names
// from object stores compare the same way as local paths.
func localName(name string) string {
	if i := strings.Index(name, "://"); i >= 0 {
		name = name[i+3:]
		if j := strings.IndexByte(name, '/'); j >= 0 {
			return name[j+1:]
		}
		return ""
	}
	return strings.TrimPrefix(name, "./")
}

func hidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

func matchSegments(pattern, name []string) bool {
	for len(pattern) > 0 {
		if pattern[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pattern[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pattern[0], name[0]); !ok {
			return false
		}
		pattern, name = pattern[1:], name[1:]
	}
	return len(name) == 0
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
			return nil, fmt.Errorf("%q: no local root configured: %w", name, ErrUnsupported)
		}
		return m.Default, nil
	}
	scheme := name[:i]
	if b, ok := m.schemes[scheme]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%q: this server has no %s:// backend: %w", name, scheme, ErrUnsupported)
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

// IsNotFound reports whether err means a missing object.
func IsNotFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }
