package s3

import "github.com/scand/scand/storage/internal/objname"

// Scheme is the URI scheme of the names this package serves; register the
// Bucket under it: mux.Handle(s3.Scheme, b).
const Scheme = "s3"

const schemePrefix = Scheme + "://"

func uri(bucket, key string) string { return schemePrefix + bucket + "/" + key }

// parseName splits the name of an object; the rules for bucket names and
// keys are every object store's (storage/internal/objname).
func parseName(name string) (bucket, key string, err error) {
	return objname.Object("s3", schemePrefix, name)
}

// parsePrefix splits a List prefix; "s3://bucket" and "s3://bucket/" are
// the whole bucket.
func parsePrefix(prefix string) (bucket, keyPrefix string, err error) {
	return objname.Prefix("s3", schemePrefix, prefix)
}
