// Package objname parses the names of object store backends,
// "scheme://bucket/key", the same way for every store (s3, gcs, azure): what a
// bucket or container may be called, and which keys are refused because a
// store or proxy could clean them into another object's path.
package objname

import (
	"fmt"
	"io/fs"
	"strings"
)

// Split splits "scheme://bucket/key" into bucket and key (key may be
// empty). prefix is "scheme://"; store names the backend in messages.
func Split(store, prefix, name string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", "", fmt.Errorf("%s: %q is not a %s URI: %w", store, name, prefix, fs.ErrInvalid)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if err := CheckBucket(bucket); err != nil {
		return "", "", fmt.Errorf("%s: %q: %w", store, name, err)
	}
	return bucket, key, nil
}

// Object splits the name of an object: the key must not be empty and must
// pass CheckKey.
func Object(store, prefix, name string) (bucket, key string, err error) {
	bucket, key, err = Split(store, prefix, name)
	if err != nil {
		return "", "", err
	}
	if key == "" {
		return "", "", fmt.Errorf("%s: %q names a bucket, not an object: %w", store, name, fs.ErrInvalid)
	}
	if err := CheckKey(key); err != nil {
		return "", "", fmt.Errorf("%s: %q: %w", store, name, err)
	}
	return bucket, key, nil
}

// Prefix splits a List prefix; "scheme://bucket" and "scheme://bucket/"
// are the whole bucket.
func Prefix(store, prefix, name string) (bucket, keyPrefix string, err error) {
	bucket, keyPrefix, err = Split(store, prefix, name)
	if err != nil {
		return "", "", err
	}
	if err := CheckKey(keyPrefix); err != nil {
		return "", "", fmt.Errorf("%s: %q: %w", store, name, err)
	}
	return bucket, keyPrefix, nil
}

// CheckBucket accepts the characters of GCS bucket and Azure container
// names (and more: upper case and "_"), and nothing that could change the
// meaning of a request path.
func CheckBucket(bucket string) error {
	if bucket == "" {
		return fmt.Errorf("no bucket name: %w", fs.ErrInvalid)
	}
	if bucket == "." || bucket == ".." || len(bucket) > 255 {
		return fmt.Errorf("bad bucket name %q: %w", bucket, fs.ErrInvalid)
	}
	for _, c := range bucket {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("bad bucket name %q: %q is not allowed: %w", bucket, c, fs.ErrInvalid)
		}
	}
	return nil
}

// CheckKey refuses keys that start with "/" or have a "." or ".."
// segment. The stores take them literally, but they travel in request
// paths, where proxies, gateways and some stores clean them, so the
// request could reach another object than the one named: the storage
// contract calls that leaving the root (fs.ErrPermission).
func CheckKey(key string) error {
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("the key starts with \"/\": %w", fs.ErrPermission)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("the key has a %q segment: %w", seg, fs.ErrPermission)
		}
	}
	return nil
}
