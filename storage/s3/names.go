package s3

import (
	"fmt"
	"io/fs"
	"strings"
)

// Scheme is the URI scheme of the names this package serves; register the
// Bucket under it: mux.Handle(s3.Scheme, b).
const Scheme = "s3"

const schemePrefix = Scheme + "://"

func uri(bucket, key string) string { return schemePrefix + bucket + "/" + key }

// splitURI splits "s3://bucket/key" into bucket and key (which may be
// empty).
func splitURI(name string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(name, schemePrefix)
	if !ok {
		return "", "", fmt.Errorf("s3: %q is not an %s URI: %w", name, schemePrefix, fs.ErrInvalid)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if err := checkBucket(bucket); err != nil {
		return "", "", fmt.Errorf("s3: %q: %w", name, err)
	}
	return bucket, key, nil
}

// parseName splits the name of an object.
func parseName(name string) (bucket, key string, err error) {
	bucket, key, err = splitURI(name)
	if err != nil {
		return "", "", err
	}
	if key == "" {
		return "", "", fmt.Errorf("s3: %q names a bucket, not an object: %w", name, fs.ErrInvalid)
	}
	if err := checkKey(key); err != nil {
		return "", "", fmt.Errorf("s3: %q: %w", name, err)
	}
	return bucket, key, nil
}

// parsePrefix splits a List prefix; "s3://bucket" and "s3://bucket/" are
// the whole bucket.
func parsePrefix(prefix string) (bucket, keyPrefix string, err error) {
	bucket, keyPrefix, err = splitURI(prefix)
	if err != nil {
		return "", "", err
	}
	if err := checkKey(keyPrefix); err != nil {
		return "", "", fmt.Errorf("s3: %q: %w", prefix, err)
	}
	return bucket, keyPrefix, nil
}

// checkBucket accepts the characters of S3 bucket names, upper case and
// "_" included for older buckets and other stores, and nothing that could
// change the meaning of a path-style request path.
func checkBucket(bucket string) error {
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

// checkKey refuses keys that start with "/" or have a "." or ".."
// segment. S3 itself takes them literally, but they travel in the request
// path, where proxies, gateways and some stores clean them, so the request
// could reach another key, or with path-style addressing another bucket,
// than the one named. The storage contract calls that leaving the root.
func checkKey(key string) error {
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
