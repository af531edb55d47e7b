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
	root    string   // absolute, symlinks resolved
	dir     *os.Root // the root directory, opened once; never closed
	escapes error    // what dir's methods wrap for a path that leaves it
	mmap    bool     // map opened files (WithMmap)
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
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("local root %q: %w", dir, err)
	}
	b := &Bucket{root: real, dir: root, escapes: escapeError(root)}
	for _, o := range opts {
		o(b)
	}
	if b.mmap && !mmapSupported {
		return nil, fmt.Errorf("local root %q: %w", dir, errNoMmap)
	}
	return b, nil
}

// escapeError returns the error os.Root reports, inside an *fs.PathError,
// for a path that leaves it: os does not export it, so it is learnt once
// by asking for "..", which always escapes. Classifying by it is by
// identity (errors.Is), not by message.
func escapeError(root *os.Root) error {
	f, err := root.Open("..")
	if err == nil {
		f.Close()
		return errNeverMatches
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var errNeverMatches = errors.New("local: no escape error")

// Root returns the bucket's absolute root directory.
func (b *Bucket) Root() string { return b.root }

// resolve turns a name into a clean root-relative slash path and the
// path to open it by inside the root: where its symlinks lead now, as a
// path relative to the root without links ("." for the root itself). It
// refuses names that leave the root, and symlink loops. A path that does
// not exist (yet) is opened by its clean name, through the os.Root, which
// refuses whatever link may have appeared there meanwhile.
func (b *Bucket) resolve(name string) (rel, inRoot string, err error) {
	clean, err := b.clean(name)
	if err != nil {
		return "", "", err
	}
	inRoot = clean
	real, err := filepath.EvalSymlinks(filepath.Join(b.root, clean))
	switch {
	case err == nil:
		if !within(b.root, real) {
			return "", "", fmt.Errorf("%q resolves outside the server's root: %w", name, fs.ErrPermission)
		}
		inRoot, _ = filepath.Rel(b.root, real)
	case errors.Is(err, syscall.ELOOP):
		return "", "", loopError(name)
	}
	if inRoot == "" {
		inRoot = "."
	}
	return filepath.ToSlash(clean), inRoot, nil
}

// target is Info.Target for a name whose clean root-relative slash form
// is rel and which leads to at (a path in the root without links, native
// or slash, "." for the root): empty when the two are the same.
func target(rel, at string) string {
	t := filepath.ToSlash(at)
	if t == rel || t == "." {
		return ""
	}
	return t
}

// openedTarget is Info.Target for f, opened by the name rel that resolve
// led to inRoot: where the kernel says the descriptor is, so that a link
// swapped in between resolve and the open is seen for what it leads to.
// Where the kernel cannot say, or names a path outside the root (the root
// was moved, the file unlinked since), it is where resolve found it.
func (b *Bucket) openedTarget(f *os.File, rel, inRoot string) string {
	if p, ok := descriptorPath(f); ok {
		p = strings.TrimSuffix(p, " (deleted)")
		if r, err := filepath.Rel(b.root, p); err == nil && within(b.root, p) {
			return target(rel, r)
		}
	}
	return target(rel, inRoot)
}

func loopError(name string) error {
	return fmt.Errorf("%q: too many levels of symbolic links (a symlink loop?): %w", name, fs.ErrInvalid)
}

// pathError is the storage error for an error of the os.Root's methods,
// with what failed (op) and the name the client gave: a path leaving the
// root wraps fs.ErrPermission, a symlink loop fs.ErrInvalid, and the root's
// absolute path is never shown.
func (b *Bucket) pathError(op, name string, err error) error {
	switch {
	case errors.Is(err, b.escapes):
		return fmt.Errorf("%q resolves outside the server's root: %w", name, fs.ErrPermission)
	case errors.Is(err, syscall.ELOOP):
		return loopError(name)
	}
	return fmt.Errorf("%s %q: %w", op, name, unwrapPathError(err))
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

// version is a file's Version: size and modification time, and where the
// platform has them the change time and inode (fileID, stat_*.go).
func version(st fs.FileInfo) string {
	return "mtime:" + strconv.FormatInt(st.ModTime().UnixNano(), 10) + ",size:" + strconv.FormatInt(st.Size(), 10) + fileID(st)
}

func (b *Bucket) info(rel string, st fs.FileInfo) storage.Info {
	return storage.Info{Name: rel, Size: st.Size(), Version: version(st), ModTime: st.ModTime()}
}

// Canonical implements storage.Bucket: an absolute path inside the
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
	rel, inRoot, err := b.resolve(name)
	if err != nil {
		return storage.Info{}, err
	}
	st, err := b.dir.Stat(inRoot)
	if err != nil {
		return storage.Info{}, b.pathError("stat", name, err)
	}
	if st.IsDir() {
		return storage.Info{}, fmt.Errorf("%q is a directory (name it with a trailing / to scan the files below it): %w", name, fs.ErrInvalid)
	}
	info := b.info(rel, st)
	info.Target = target(rel, inRoot)
	return info, nil
}

// unwrapPathError drops *fs.PathError's absolute path, which would tell
// clients where the root lives, and keeps its cause. ENOTDIR (a file used
// as a directory, "a.parquet/x") also means the object does not exist;
// ENAMETOOLONG is an invalid name (fs.ErrInvalid).
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	}
	if errors.Is(err, syscall.ENAMETOOLONG) {
		// A name no file can have: the request's fault, not the server's.
		return fmt.Errorf("%w (%w: a path segment is longer than the file system allows, 255 bytes on most)", fs.ErrInvalid, err)
	}
	return err
}

// Open implements storage.Bucket.
func (b *Bucket) Open(ctx context.Context, info storage.Info) (storage.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel, inRoot, err := b.resolve(info.Name)
	if err != nil {
		return nil, err
	}
	// Non-blocking, so that a FIFO does not hang the open; the checks
	// below refuse anything but a regular file.
	f, err := b.dir.OpenFile(inRoot, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, b.pathError("open", info.Name, err)
	}
	got, st, err := b.checkOpened(f, rel, info)
	if err != nil {
		f.Close()
		return nil, err
	}
	got.Target = b.openedTarget(f, rel, inRoot)
	o := opened{f: f, st: st, info: got}
	if b.mmap && got.Size > 0 { // an empty file cannot be mapped, nor needs to be
		return openMapped(o)
	}
	return &object{o}, nil
}

// checkOpened checks what was opened, on its descriptor: a regular file of
// the planned version. It returns the file's Info.
func (b *Bucket) checkOpened(f *os.File, rel string, info storage.Info) (storage.Info, fs.FileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return storage.Info{}, nil, fmt.Errorf("stat %q: %w", info.Name, unwrapPathError(err))
	}
	if st.IsDir() {
		return storage.Info{}, nil, fmt.Errorf("%q is a directory: %w", info.Name, fs.ErrInvalid)
	}
	if !st.Mode().IsRegular() {
		return storage.Info{}, nil, fmt.Errorf("%q is not a regular file (%v): %w", info.Name, st.Mode().Type(), fs.ErrInvalid)
	}
	got := b.info(rel, st)
	if info.Version != "" && info.Version != got.Version {
		return storage.Info{}, nil, fmt.Errorf("%q: %w", info.Name, storage.ErrChanged)
	}
	return got, st, nil
}

// opened is an open file with what its descriptor said at Open.
type opened struct {
	f    *os.File
	st   fs.FileInfo // fstat at Open, for Recheck
	info storage.Info
}

// recheck fstats f again and fails with ErrChanged naming the file when
// it was written since Open (modifiedSince, stat_*.go).
func (o opened) recheck() error {
	now, err := o.f.Stat()
	if err != nil {
		return fmt.Errorf("recheck %q: %w", o.info.Name, unwrapPathError(err))
	}
	if modifiedSince(o.st, now) {
		return changedError(o.info.Name, "was modified while it was read")
	}
	return nil
}

type object struct{ opened }

func (o *object) Info() storage.Info { return o.info }

// Capabilities implements storage.Object: a pread object is local.
func (o *object) Capabilities() storage.Capabilities { return storage.Capabilities{Local: true} }

// ReadSpans implements storage.Object, a pread per span.
func (o *object) ReadSpans(ctx context.Context, spans []storage.Span) error {
	return storage.ReadSpansAt(ctx, o, spans)
}

// Recheck implements storage.Object: fstat on the open descriptor.
func (o *object) Recheck(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return o.recheck()
}

// changedError says that a file changed under an open handle, and how to
// update a served dataset safely.
func changedError(name, what string) error {
	return fmt.Errorf("%q %s (replace served files by renaming new ones into place, not by writing them in place): %w",
		name, what, storage.ErrChanged)
}

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
		if int64(n) < o.info.Size-off {
			// Bytes the file had at Open are gone: truncated under us.
			return changedError(o.info.Name, fmt.Sprintf("shrank while it was read (%d bytes at %d came back short, %d of %d at Open)",
				len(p), off, int64(n)+off, o.info.Size))
		}
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %q [%d, %d): %w", o.info.Name, off, off+int64(len(p)), unwrapPathError(err))
}

func (o *object) Close() error { return o.f.Close() }

// List implements storage.Bucket. It walks the directory that holds prefix,
// without following symlinked directories, and reports regular files (and
// symlinks to regular files inside the root) in lexical order.
func (b *Bucket) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return b.ListPruned(ctx, prefix, storage.Pruning{}, fn)
}

// ListPruned implements storage.Bucket: directories p refuses are not
// walked, and files it refuses are not stat'ed.
func (b *Bucket) ListPruned(ctx context.Context, prefix string, p storage.Pruning, fn func(storage.Info) error) error {
	// The directory part may be spelled in any way resolve accepts ("./dir/",
	// "a/../dir/", an absolute path inside the root); names are compared
	// with its clean root-relative form, plus the partial last segment.
	dir, base := prefix, ""
	if !strings.HasSuffix(prefix, "/") {
		dir, base = path.Split(prefix)
	}
	relDir, start, err := b.resolve(dir)
	if err != nil {
		return err
	}
	cleanPrefix := base
	if relDir != "" {
		cleanPrefix = relDir + "/" + base
	}
	w := walk{b: b, p: p, relDir: relDir, start: filepath.ToSlash(start), prefix: cleanPrefix}
	if err := fs.WalkDir(b.dir.FS(), w.start, w.visit(ctx)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // an empty prefix lists nothing
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return b.pathError("list", prefix, err)
	}
	sort.Slice(w.found, func(i, j int) bool { return w.found[i].name < w.found[j].name })
	for _, e := range w.found {
		st, at, ok := b.statListed(e)
		if !ok {
			continue
		}
		info := b.info(e.name, st)
		info.Target = target(e.name, at)
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// walk is one ListPruned's directory walk, inside the root's fs.FS.
type walk struct {
	b      *Bucket
	p      storage.Pruning
	relDir string // the listed directory, root-relative ("" for the root)
	start  string // where the walk starts in the root's FS: relDir resolved
	prefix string // names must start with it
	found  []listed
}

// listed is a file found by the walk: its root-relative name, its path in
// the root's FS, and whether it is a symlink.
type listed struct {
	name, at string
	link     bool
}

func (w *walk) visit(ctx context.Context) fs.WalkDirFunc {
	return func(at string, d fs.DirEntry, err error) error {
		if err != nil {
			if at == w.start {
				return err
			}
			return nil // an unreadable subdirectory is skipped, not fatal
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		name := w.relDir
		switch {
		case at == w.start:
		case w.start == ".":
			name = path.Join(w.relDir, at)
		default:
			name = path.Join(w.relDir, strings.TrimPrefix(at, w.start+"/"))
		}
		if d.IsDir() {
			if at == w.start {
				return nil
			}
			dir := name + "/"
			if !strings.HasPrefix(dir, w.prefix) && !strings.HasPrefix(w.prefix, dir) {
				return fs.SkipDir // cannot hold a name with the prefix
			}
			if w.p.Dir != nil && !w.p.Dir(dir) {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, w.prefix) && (w.p.Object == nil || w.p.Object(name)) {
			w.found = append(w.found, listed{name: name, at: at, link: d.Type()&fs.ModeSymlink != 0})
		}
		return nil
	}
}

// statListed stats a listed file inside the root: a symlink by where it
// leads (it is skipped when that is outside the root), anything else by
// its path. Only regular files are objects. at is the path stat'ed, in
// the root without links: where a read of the file reads (a listing
// below a symlinked directory walks the directory it leads to).
func (b *Bucket) statListed(e listed) (st fs.FileInfo, at string, ok bool) {
	at = e.at
	if e.link {
		_, inRoot, err := b.resolve(e.name)
		if err != nil {
			return nil, "", false
		}
		at = inRoot
	}
	st, err := b.dir.Stat(at)
	if err != nil || !st.Mode().IsRegular() {
		return nil, "", false
	}
	return st, at, true
}
