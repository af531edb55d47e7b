package iceberg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"time"

	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/scand/scand/scanner"
	"github.com/scand/scand/storage"
)

// objectName turns a name from a table's metadata into the name scand's
// storage resolves: a file URI (file:///abs/path, file:/abs/path) or an
// absolute path becomes the path, which a local root accepts only inside
// itself (storage.Bucket.Canonical; fs.ErrPermission otherwise); an object
// store URI (s3://, gs://, ...) stays as it is.
func objectName(b storage.Bucket, name string) (string, error) {
	if strings.HasPrefix(name, "file:") {
		u, err := url.Parse(name)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", fmt.Errorf("%q is not a local file URI scand reads: %w", name, fs.ErrInvalid)
		}
		name = u.Path
	}
	if strings.Contains(name, "://") {
		return name, nil
	}
	return b.Canonical(name)
}

// bucketIO is iceberg-go's io.IO over a storage.Bucket: iceberg-go reads a
// table's manifest lists and manifests through it, so that what scand
// allows (the server's root, its scopes, its S3 settings) decides what a
// table may read. It holds the context of the listing that made it (the
// one exception to keeping contexts out of structs: iceberg-go's IO has
// none of its own) and is used only during that listing.
type bucketIO struct {
	ctx       context.Context
	bucket    storage.Bucket
	authorize func(info storage.Info) error
	// maxBytes caps one metadata object read whole.
	maxBytes int64

	mu    sync.Mutex
	read  []string       // names read, in order
	infos []storage.Info // what each stat found (read[i]'s), link targets included
	// keep names the one object kept in memory once read (kept, keptInfo).
	keep     string
	kept     []byte
	keptInfo storage.Info
	// manifests is what the snapshot's manifest list says of each of its
	// manifests, by object name, and columns the table schema's fields
	// (expect).
	manifests map[string]listedManifest
	columns   int
}

var (
	_ iceio.IO         = (*bucketIO)(nil)
	_ iceio.ReadFileIO = (*bucketIO)(nil)
)

// open resolves and authorizes name and opens it. A manifest the
// snapshot's list names is opened by the length the list gives, without
// a Stat first (on an object store, a HEAD round trip a manifest; the
// first GET pins its version, and a length other than the list's fails
// as a changed object): it is authorized by name before it is opened and
// by what opening found (a link's target) before it is read.
func (b *bucketIO) open(name string) (storage.Object, error) {
	obj, err := objectName(b.bucket, name)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	m, listed := b.manifests[obj]
	b.mu.Unlock()
	var o storage.Object
	if listed && m.length > 0 {
		o, err = b.openListed(obj, m.length)
	} else {
		var info storage.Info
		if info, err = authorizedStat(b.ctx, b.bucket, b.authorize, obj); err == nil {
			o, err = b.bucket.Open(b.ctx, info)
		}
	}
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.read = append(b.read, obj)
	b.infos = append(b.infos, o.Info())
	b.mu.Unlock()
	return o, nil
}

// openListed opens obj, of the given length, authorized as open says.
func (b *bucketIO) openListed(obj string, length int64) (storage.Object, error) {
	if b.authorize != nil {
		if err := b.authorize(storage.Info{Name: obj}); err != nil {
			return nil, err
		}
	}
	o, err := b.bucket.Open(b.ctx, storage.Info{Name: obj, Size: length})
	if err != nil {
		return nil, err
	}
	if b.authorize != nil {
		if err := b.authorize(o.Info()); err != nil {
			o.Close()
			return nil, err
		}
	}
	return o, nil
}

// Open implements iceberg-go's io.IO. iceberg-go opens only metadata
// objects (manifest lists and manifests) and reads each from start to end in
// small pieces, so the object is read whole at once: one request, where
// reading it piecewise on an object store costs a round trip per piece.
//
// What the object's decoded entries take (decodedBytes) is charged to the
// metadata budget the listing's context carries (the plan's share,
// planner.list) before the object is read, and stays charged until the
// listing ends: the entries planning keeps (every one, unless a filter
// prunes) live until it answers.
func (b *bucketIO) Open(name string) (iceio.File, error) {
	buf, info, err := b.readName(name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(buf), info: info}, nil
}

// ReadFile implements iceberg-go's io.ReadFileIO.
func (b *bucketIO) ReadFile(name string) ([]byte, error) {
	buf, _, err := b.readName(name)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(buf), nil
}

// What iceberg-go's decoded manifest entries keep: an entry's data file
// holds its path and partition, and per column of the table a size,
// counts and bounds, each in a map (TestManifestDecodeCharge measures
// 0.8 KB an entry with 1 column, 1.7 KB with 8, 4.0 KB with 24), so an
// entry is charged entryBytes plus columnEntryBytes per field of the
// table's schema. An object whose entries are not known (the manifest
// list; a manifest a v1 list gives no counts for) is charged
// manifestDecodeFactor times its size: the same manifests keep 20x to 59x
// their bytes (iceberg-go compresses them; paths compress best).
const (
	entryBytes           = 1 << 10
	columnEntryBytes     = 160
	manifestDecodeFactor = 64
)

// listedManifest is what a snapshot's manifest list says of a manifest.
type listedManifest struct {
	length  int64 // bytes
	entries int64 // files it names; -1: the list does not say
}

// expect records the snapshot's manifests, so that opening one needs no
// Stat (open) and charges what its entries will take (decodedBytes);
// columns is the number of the table schema's fields.
func (b *bucketIO) expect(manifests []ice.ManifestFile, columns int) {
	listed := make(map[string]listedManifest, len(manifests))
	for _, m := range manifests {
		name, err := objectName(b.bucket, m.FilePath())
		if err != nil {
			continue
		}
		lm := listedManifest{length: m.Length(), entries: -1}
		if m.AddedDataFiles() >= 0 && m.ExistingDataFiles() >= 0 && m.DeletedDataFiles() >= 0 {
			lm.entries = int64(m.AddedDataFiles()) + int64(m.ExistingDataFiles()) + int64(m.DeletedDataFiles())
		}
		listed[name] = lm
	}
	b.mu.Lock()
	b.manifests, b.columns = listed, columns
	b.mu.Unlock()
}

// decodedBytes estimates what object obj of size bytes takes once read
// and decoded.
func (b *bucketIO) decodedBytes(obj string, size int64) int64 {
	b.mu.Lock()
	m, listed := b.manifests[obj]
	columns := b.columns
	b.mu.Unlock()
	if listed && m.entries >= 0 {
		return size + m.entries*(entryBytes+columnEntryBytes*int64(columns))
	}
	return size * manifestDecodeFactor
}

// readName reads the object name whole: from memory when it is the
// object kept (the snapshot's manifest list, which a listing reads twice:
// to plan, then to count the manifests skipped), else from the bucket,
// charging what it decodes to (decodedBytes) before reading it.
func (b *bucketIO) readName(name string) ([]byte, storage.Info, error) {
	obj, err := objectName(b.bucket, name)
	if err == nil {
		b.mu.Lock()
		buf, info := b.kept, b.keptInfo
		keep := obj == b.keep
		b.mu.Unlock()
		if keep && buf != nil {
			return buf, info, nil
		}
	}
	o, err := b.open(name)
	if err != nil {
		return nil, storage.Info{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	info := o.Info()
	if b.maxBytes <= 0 || info.Size <= b.maxBytes { // else readWhole refuses it
		if err := chargeListing(b.ctx, name, b.decodedBytes(obj, info.Size)); err != nil {
			o.Close()
			return nil, storage.Info{}, err
		}
	}
	buf, err := b.readWhole(name, o)
	if err != nil {
		return nil, storage.Info{}, err
	}
	b.mu.Lock()
	if obj == b.keep {
		b.kept, b.keptInfo = buf, info
	}
	b.mu.Unlock()
	return buf, info, nil
}

// readWhole reads all of o (at most maxBytes) and closes it.
func (b *bucketIO) readWhole(name string, o storage.Object) ([]byte, error) {
	defer o.Close()
	size := o.Info().Size
	if b.maxBytes > 0 && size > b.maxBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d scand reads of one table metadata object: %w", name, size, b.maxBytes, errTooLarge)
	}
	buf := make([]byte, size)
	if err := o.ReadAt(b.ctx, buf, 0); err != nil && !(size == 0 && errors.Is(err, io.EOF)) {
		return nil, err
	}
	return buf, nil
}

// memFile is iceberg-go's io.File over a metadata object read whole.
type memFile struct {
	*bytes.Reader
	info storage.Info
}

func (f *memFile) Stat() (fs.FileInfo, error) { return fileInfo{f.info}, nil }

func (f *memFile) Close() error { return nil }

// Remove implements iceberg-go's io.IO: scand never writes.
func (b *bucketIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

var errTooLarge = errors.New("metadata object too large")

// chargeError is a metadata budget's refusal (the plan's share is full,
// or waiting for it ended): classify passes it on as the budget said it,
// through whatever iceberg-go wrapped it in, for the edge to map.
type chargeError struct{ err error }

func (e *chargeError) Error() string { return e.err.Error() }
func (e *chargeError) Unwrap() error { return e.err }

// fileInfo is a storage.Info as an fs.FileInfo.
type fileInfo struct{ info storage.Info }

func (i fileInfo) Name() string       { return i.info.Name[strings.LastIndexByte(i.info.Name, '/')+1:] }
func (i fileInfo) Size() int64        { return i.info.Size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return i.info.ModTime }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

// authorizedStat stats an object and asks authorize (nil: everything is
// allowed) about it: its name first, then what the stat found (a link's
// target), before anything of it is read.
func authorizedStat(ctx context.Context, b storage.Bucket, authorize func(storage.Info) error, name string) (storage.Info, error) {
	if authorize != nil {
		if err := authorize(storage.Info{Name: name}); err != nil {
			return storage.Info{}, err
		}
	}
	info, err := b.Stat(ctx, name)
	if err != nil {
		return info, err
	}
	if authorize != nil {
		if err := authorize(info); err != nil {
			return storage.Info{}, err
		}
	}
	return info, nil
}

// readAll reads a whole object by its storage name, up to max bytes,
// after authorize allows it. factor times its size is charged to the
// metadata budget ctx carries, if any, before it is read, and stays
// charged until the listing ends (planner.list): what is read this way
// (a table's metadata file) is kept, parsed, for the whole listing.
func readAll(ctx context.Context, b storage.Bucket, authorize func(storage.Info) error, name string, max, factor int64) ([]byte, storage.Info, error) {
	info, err := authorizedStat(ctx, b, authorize, name)
	if err != nil {
		return nil, info, err
	}
	if info.Size > max {
		return nil, info, fmt.Errorf("%s is %d bytes, over the %d scand reads of one table metadata object: %w", name, info.Size, max, errTooLarge)
	}
	if err := chargeListing(ctx, name, info.Size*factor); err != nil {
		return nil, info, err
	}
	o, err := b.Open(ctx, info)
	if err != nil {
		return nil, info, err
	}
	defer o.Close()
	buf := make([]byte, info.Size)
	if err := o.ReadAt(ctx, buf, 0); err != nil && info.Size > 0 {
		return nil, info, err
	}
	return buf, info, nil
}

// metadataDecodeFactor estimates what a table metadata file takes while a
// listing holds it, per byte: the bytes themselves and what parsing them
// keeps (parsing the bench table's 142 KB metadata file of 200 snapshots
// allocates 5.3x its size, most of it garbage once parsed).
const metadataDecodeFactor = 4

// chargeListing charges n bytes for reading name to the metadata budget
// ctx carries, if any, for the rest of the listing (planner.list gives
// back what a listing was charged when it ends).
func chargeListing(ctx context.Context, name string, n int64) error {
	r := scanner.MetadataBudget(ctx)
	if r == nil || n <= 0 {
		return nil
	}
	if err := r.Reserve(ctx, n); err != nil {
		return &chargeError{fmt.Errorf("reading %s (about %d bytes decoded): %w", name, n, err)}
	}
	return nil
}
