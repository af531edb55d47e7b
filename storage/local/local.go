// Package local serves objects from a directory tree on local disk. Every
// name is resolved inside the root: "..", absolute paths elsewhere and
// symlinks whose target leaves the root are refused with fs.ErrPermission.
// Reads use pread on one open descriptor, so concurrent ranged reads of a
// file need no locking; with WithMmap they copy from a read-only mapping of
// the file instead (mmap.go).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/scand/scand/storage"
)

// Bucket is a storage.Bucket over a local directory. It is safe for
// concurrent use.
type Bucket struct {
	root string // absolute, symlinks resolved
	mmap bool   // map opened files (WithMmap)
}

// New returns a bucket rooted at dir.
func New(dir string, opts ...Option) (*Bucket, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local root %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("local root %q: %w", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("local root %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("local root %q is not a directory", dir)
	}
	b := &Bucket{root: real}
	for _, o := range opts {
		o(b)
	}
	if b.mmap && !mmapSupported {
		return nil, fmt.Errorf("local root %q: %w", dir, errNoMmap)
	}
	return b, nil
}

// Root returns the bucket's absolute root directory.
func (b *Bucket) Root() string { return b.root }

// resolve turns a name into a clean root-relative slash path and the real
// file system path behind it, refusing anything that leaves the root.
func (b *Bucket) resolve(name string) (rel, full string, err error) {
	clean, err := b.clean(name)
	if err != nil {
		return "", "", err
	}
	full = filepath.Join(b.root, clean)
	// A symlink anywhere on the way may point outside the root; resolve it
	// and check where it lands.
	if real, err := filepath.EvalSymlinks(full); err == nil {
		if !within(b.root, real) {
			return "", "", fmt.Errorf("%q resolves outside the server's root: %w", name, fs.ErrPermission)
		}
		full = real
	}
	return filepath.ToSlash(clean), full, nil
}

// clean returns name as a clean root-relative native path ("" for the root
// itself): an absolute path must lie inside the root, and no name may
// leave it with "..".
func (b *Bucket) clean(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%q: invalid name: %w", name, fs.ErrInvalid)
	}
	native := filepath.FromSlash(name)
	if filepath.IsAbs(native) {
		r, err := filepath.Rel(b.root, filepath.Clean(native))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%q is outside the server's root: %w", name, fs.ErrPermission)
		}
		native = r
	}
	clean := filepath.Clean(native)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q leaves the server's root: %w", name, fs.ErrPermission)
	}
	if clean == "." {
		clean = ""
	}
	return clean, nil
}

func within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

func version(st fs.FileInfo) string {
	return "mtime:" + strconv.FormatInt(st.ModTime().UnixNano(), 10) + ",size:" + strconv.FormatInt(st.Size(), 10)
}

func (b *Bucket) info(rel string, st fs.FileInfo) storage.Info {
	return storage.Info{Name: rel, Size: st.Size(), Version: version(st), ModTime: st.ModTime()}
}

// Canonical implements storage.Canonicalizer: an absolute path inside the
// root becomes root-relative, and "." and ".." segments and doubled
// slashes are cleaned away, so "./trips/*.parquet" and
// "/srv/data/trips/*.parquet" (root /srv/data) match the names List
// reports. A trailing slash (a directory scan) is kept; a name that leaves
// the root fails with fs.ErrPermission.
func (b *Bucket) Canonical(name string) (string, error) {
	if strings.Contains(name, "://") && !strings.ContainsRune(name, 0) {
		return name, nil // a URI: not ours to respell (Expand and Stat say why)
	}
	native, err := b.clean(name)
	if err != nil {
		return "", err
	}
	clean := filepath.ToSlash(native)
	if strings.HasSuffix(name, "/") {
		if clean == "" {
			return "./", nil // the whole root
		}
		clean += "/"
	}
	return clean, nil
}

// Stat implements storage.Bucket.
func (b *Bucket) Stat(ctx context.Context, name string) (storage.Info, error) {
	if err := ctx.Err(); err != nil {
		return storage.Info{}, err
	}
	rel, full, err := b.resolve(name)
	if err != nil {
		return storage.Info{}, err
	}
	st, err := os.Stat(full)
	if err != nil {
		return storage.Info{}, fmt.Errorf("stat %q: %w", name, unwrapPathError(err))
	}
	if st.IsDir() {
		return storage.Info{}, fmt.Errorf("%q is a directory (name it with a trailing / to scan the files below it): %w", name, fs.ErrInvalid)
	}
	return b.info(rel, st), nil
}

// unwrapPathError drops *fs.PathError's absolute path, which would tell
// clients where the root lives, and keeps its cause. ENOTDIR (a file used
// as a directory, "a.parquet/x") also means the object does not exist.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	}
	return err
}

// Open implements storage.Bucket.
func (b *Bucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel, full, err := b.resolve(info.Name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", info.Name, unwrapPathError(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %q: %w", info.Name, unwrapPathError(err))
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%q is a directory: %w", info.Name, fs.ErrInvalid)
	}
	got := b.info(rel, st)
	if info.Version != "" && info.Version != got.Version {
		f.Close()
		return nil, fmt.Errorf("%q: %w", info.Name, storage.ErrChanged)
	}
	if b.mmap && got.Size > 0 { // an empty file cannot be mapped, nor needs to be
		return openMapped(f, got)
	}
	return &object{f: f, info: got}, nil
}

type object struct {
	f    *os.File
	info storage.Info
}

func (o *object) Info() storage.Info { return o.info }

func (o *object) ReadAt(ctx context.Context, p []byte, off int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("read %q at %d: negative offset: %w", o.info.Name, off, fs.ErrInvalid)
	}
	if off >= o.info.Size && len(p) > 0 {
		return io.EOF
	}
	n, err := o.f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %q [%d, %d): %w", o.info.Name, off, off+int64(len(p)), unwrapPathError(err))
}

func (o *object) Close() error { return o.f.Close() }

// List implements storage.Bucket. It walks the directory that holds prefix,
// without following symlinked directories, and reports regular files (and
// symlinks to regular files inside the root) in lexical order.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	// The directory part may be spelled in any way resolve accepts ("./dir/",
	// "a/../dir/", an absolute path inside the root); names are compared
	// with its clean root-relative form, plus the partial last segment.
	dir, base := prefix, ""
	if !strings.HasSuffix(prefix, "/") {
		dir, base = path.Split(prefix)
	}
	relDir, full, err := b.resolve(dir)
	if err != nil {
		return err
	}
	cleanPrefix := base
	if relDir != "" {
		cleanPrefix = relDir + "/" + base
	}
	var names []string
	err = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == full {
				return err
			}
			return nil // an unreadable subdirectory is skipped, not fatal
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			return nil
		}
		r, _ := filepath.Rel(full, p)
		name := path.Join(relDir, filepath.ToSlash(r))
		if strings.HasPrefix(name, cleanPrefix) {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // an empty prefix lists nothing
		}
		return fmt.Errorf("list %q: %w", prefix, unwrapPathError(err))
	}
	sort.Strings(names)
	for _, name := range names {
		_, fullName, err := b.resolve(name)
		if err != nil {
			continue // a symlink leaving the root is not listed
		}
		st, err := os.Stat(fullName)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if err := fn(b.info(name, st)); err != nil {
			return err
		}
	}
	return nil
}
