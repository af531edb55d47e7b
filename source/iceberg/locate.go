package iceberg

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/scand/scand/source"
	"github.com/scand/scand/storage"
)

// ErrNoTable is wrapped by the error of a location that holds no Iceberg
// metadata file.
var ErrNoTable = errors.New("no Iceberg table")

// isMetadataFile reports whether name is a table metadata file rather
// than a table's location.
func isMetadataFile(name string) bool {
	return strings.HasSuffix(name, ".metadata.json") || strings.HasSuffix(name, ".metadata.json.gz")
}

// metadataVersion is the version a metadata file's name gives it:
// "00003-<uuid>.metadata.json" (catalogs) or "v3.metadata.json" (Hadoop
// tables, whose version-hint.text names the newest); -1 for other names.
func metadataVersion(base string) int64 {
	if !isMetadataFile(base) {
		return -1
	}
	digits := strings.TrimPrefix(base, "v")
	end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return -1
	}
	switch rest := digits[end:]; {
	case base[0] == 'v' && (strings.HasPrefix(rest, ".metadata.json") || strings.HasPrefix(rest, ".gz.metadata.json")):
	case base[0] != 'v' && strings.HasPrefix(rest, "-"):
	default:
		return -1
	}
	v, err := strconv.ParseInt(digits[:end], 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// locate finds the metadata file of the table at location (a storage name
// without a trailing slash): the one metadata/version-hint.text names
// when there is one, else the metadata file of the highest version in
// metadata/.
func (s *Source) locate(ctx context.Context, location string) (string, error) {
	dir := location + "/metadata/"
	hint := dir + "version-hint.text"
	b, _, err := readAll(ctx, s.bucket, s.opts.Authorize, hint, 4096, 1)
	switch {
	case err == nil:
		v := strings.TrimSpace(string(b))
		if isMetadataFile(v) {
			return dir + path.Base(v), nil
		}
		if n, perr := strconv.ParseInt(v, 10, 64); perr == nil && n >= 0 {
			for _, name := range []string{fmt.Sprintf("v%d.metadata.json", n), fmt.Sprintf("v%d.gz.metadata.json", n)} {
				if _, err := s.bucket.Stat(ctx, dir+name); err == nil {
					return dir + name, nil
				}
			}
		}
		// A hint that names nothing readable: fall back to listing, as
		// Iceberg's Hadoop tables do.
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	best, bestVersion := "", int64(-1)
	err = s.bucket.List(ctx, dir, func(info storage.Info) error {
		base := path.Base(info.Name)
		if strings.Contains(strings.TrimPrefix(info.Name, dir), "/") {
			return nil
		}
		if v := metadataVersion(base); v > bestVersion {
			best, bestVersion = info.Name, v
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if best == "" {
		return "", &source.Error{Kind: source.NotFound, Msg: fmt.Sprintf("no table at %q: no Iceberg metadata file in %s", location, dir), Err: ErrNoTable}
	}
	return best, nil
}

// readMetadata reads a metadata file, gunzipping it when its name says so,
// up to max bytes either way.
func (s *Source) readMetadata(ctx context.Context, name string, max int64) ([]byte, storage.Info, error) {
	b, info, err := readAll(ctx, s.bucket, s.opts.Authorize, name, max, metadataDecodeFactor)
	if err != nil {
		return nil, info, err
	}
	if !strings.HasSuffix(name, ".gz") && !strings.HasSuffix(name, ".gz.metadata.json") {
		return b, info, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, info, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table metadata %s is not gzip", name), Err: err}
	}
	out, err := io.ReadAll(io.LimitReader(zr, max+1))
	if err != nil {
		return nil, info, &source.Error{Kind: source.Corrupt, Msg: fmt.Sprintf("table metadata %s", name), Err: err}
	}
	if int64(len(out)) > max {
		return nil, info, fmt.Errorf("table metadata %s inflates past %d bytes: %w", name, max, errTooLarge)
	}
	// What it inflated to is charged once known (at most max).
	if err := chargeListing(ctx, name, int64(len(out))*metadataDecodeFactor); err != nil {
		return nil, info, err
	}
	return out, info, nil
}
