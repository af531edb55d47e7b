package files

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner/hive"
	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// MaxFiles caps the files one request's paths may match.
const MaxFiles = 10_000

// Scope is what the caller may read.
type Scope interface {
	// Check refuses a name asked for directly that the caller may not
	// read.
	Check(name string) error
	// CheckFile refuses a file the caller may not read: its name, or
	// where it leads (storage.Info.Target).
	CheckFile(info storage.Info) error
	// AllowsFile is CheckFile as a yes or no, for listings, where files
	// outside the scope look absent.
	AllowsFile(info storage.Info) bool
}

// Source lists the files a request's paths name.
type Source struct {
	bucket storage.Bucket
	paths  []string
	scope  Scope
}

// New returns the source of paths in bucket, as scope may read them.
func New(bucket storage.Bucket, paths []string, scope Scope) *Source {
	return &Source{bucket: bucket, paths: paths, scope: scope}
}

// List expands the paths (Expand) and infers their hive partitions.
func (s *Source) List(ctx context.Context) (*source.Listing, error) {
	infos, err := s.Expand(ctx)
	if err != nil {
		return nil, err
	}
	return listingOf(infos)
}

// Expand resolves the paths into distinct files the caller may read, in
// request order.
func (s *Source) Expand(ctx context.Context) ([]storage.Info, error) {
	var files []storage.Info
	seen := map[string]bool{}
	for _, p := range s.paths {
		infos, err := s.expandPath(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			if seen[info.Name] {
				continue
			}
			seen[info.Name] = true
			files = append(files, info)
			if len(files) > MaxFiles {
				return nil, &source.Error{Kind: source.TooLarge, Msg: fmt.Sprintf("the request matches more than %d files; scan fewer at a time", MaxFiles)}
			}
		}
	}
	return files, nil
}

// expandPath resolves one request path into the files the caller may
// read. A name asked for directly is checked before storage is touched,
// so the answer is the same whether it exists or not; a pattern is
// filtered, so names outside the scope look absent.
func (s *Source) expandPath(ctx context.Context, p string) ([]storage.Info, error) {
	name, err := storage.Canonical(s.bucket, p)
	if err != nil {
		return nil, err
	}
	if !storage.IsPattern(name) {
		info, err := s.authorize(ctx, name)
		if err != nil {
			return nil, err
		}
		return []storage.Info{info}, nil
	}
	infos, err := storage.Expand(ctx, s.bucket, name)
	if err != nil {
		return nil, err
	}
	kept := infos[:0]
	for _, info := range infos {
		if s.scope.AllowsFile(info) {
			kept = append(kept, info)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no files match %q: %w", p, fs.ErrNotExist)
	}
	return kept, nil
}

// authorize returns the Info of one file named in canonical spelling, if
// the caller may read it: the name is checked before storage is touched,
// then what it leads to.
func (s *Source) authorize(ctx context.Context, name string) (storage.Info, error) {
	if err := s.scope.Check(name); err != nil {
		return storage.Info{}, err
	}
	info, err := s.bucket.Stat(ctx, name)
	if err != nil {
		return storage.Info{}, err
	}
	if err := s.scope.CheckFile(info); err != nil {
		return storage.Info{}, err
	}
	return info, nil
}

// listingOf is the listing of infos: their hive partition columns
// inferred over all of them, and each file's values.
func listingOf(infos []storage.Info) (*source.Listing, error) {
	values := make([][]hive.Value, len(infos))
	for i, info := range infos {
		values[i] = hive.Parse(info.Name)
	}
	l := &source.Listing{Files: make([]source.File, len(infos)), Partitions: hive.Fields(values)}
	for i, info := range infos {
		l.Files[i] = source.File{Object: info}
		if len(l.Partitions) == 0 {
			continue
		}
		byKey := hive.ByKey(values[i])
		l.Files[i].Partition = make([]scalar.Scalar, len(l.Partitions))
		for j, f := range l.Partitions {
			v, ok := byKey[f.Name]
			if !ok {
				continue // the path lacks the key: null
			}
			sc, err := hive.Scalar(v, f.Type)
			if err != nil {
				return nil, fmt.Errorf("partition column %s: %w", f.Name, err)
			}
			l.Files[i].Partition[j] = sc
		}
	}
	return l, nil
}
