// Package gcs is scand's storage backend for Google Cloud Storage, on
// cloud.google.com/go/storage. A Bucket implements storage.Bucket for
// names of the form "gs://bucket/key", in any bucket its credentials
// reach; register it with a storage.Mux under Scheme:
//
//	b, err := gcs.New(ctx, gcs.Config{})
//	mux.Handle(gcs.Scheme, b)
//
// # Requests
//
// Stat and Open ask for the object's metadata (size, generation as
// Info.Version, update time as ModTime). List pages through objects.list,
// asking only for names, sizes, generations and update times; GCS returns
// names in lexical order, and a store that breaks that order makes List
// fail rather than Expand return files out of order. Reads use the JSON
// API (the SDK's JSON reads, which emulators serve too): Object.ReadAt is
// one ranged read of the bytes asked for, clamped to the size Open saw,
// and ReadSpans one ranged read from the first span to the end of the
// last whose gap bytes are dropped as they arrive
// (storage.Capabilities.SpanReads). An object keeps nothing between
// reads, so reads may run concurrently and Close has nothing to release.
//
// # Versions: the generation precondition
//
// A scan plans its reads from a listing or a Stat, then reads many ranges
// over seconds or minutes. Every read carries the planned generation as
// ifGenerationMatch: GCS answers 412 instead of serving bytes of another
// generation, and the read fails with storage.ErrChanged, which the server
// maps to FAILED_PRECONDITION. Each read also checks the generation and
// total size its response reports, for stores that ignore the
// precondition (fake-gcs-server does, on reads). When the caller knows
// size and version (a listing, a DoGet ticket), Open sends no request.
// Objects stored with Content-Encoding gzip are refused: GCS serves them
// whole and decompressed whatever range is asked for.
//
// # Retries
//
// The SDK retries each request (429, 5xx, connections refused or reset)
// with exponential backoff capped by Config.MaxBackoff, at most
// Config.MaxAttempts times in all: the SDK's default would retry until the
// caller's deadline. Its reader reopens a body that breaks off, pinned to
// the generation first served. What is left, a body that fails again or
// goes silent for Config.StallTimeout, the backend resumes with a new
// ranged read of the bytes still missing (storage/internal/ranged), and
// gives up after MaxAttempts reads in a row that delivered nothing.
// Metadata requests and listings wait at most StallTimeout for their
// response headers (the transport is the package's own, with the
// credentials on top), and the SDK retries them. A store that stays
// unreachable wraps storage.ErrUnavailable, naming the object. Cancelling a call's ctx aborts its request at once and returns
// ctx.Err() unwrapped.
//
// # Errors
//
// Errors name the operation and the gs:// URI and wrap the storage
// sentinels: 404 is fs.ErrNotExist, and the message says whether the
// bucket or the object is missing (an object's 404 does not tell, so one
// listing of at most one name asks); 401 and 403, and credentials the
// token endpoint refuses, are fs.ErrPermission; 412 is storage.ErrChanged;
// 408, 429, 5xx and transport failures once the retries are spent are
// storage.ErrUnavailable. Keys that start with "/" or hold a "." or ".."
// segment are fs.ErrPermission, as in package s3. Messages never carry the
// endpoint URL or credentials; the SDK's error stays in the chain.
//
// # Credentials
//
// Config.CredentialsFile (a service account key), Config.Anonymous, or
// else Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS,
// the gcloud user's, the metadata server (GKE Workload Identity). The
// client asks for the read-only scope. STORAGE_EMULATOR_HOST, when set,
// points the client at an emulator without authentication, as the SDK
// does.
//
// # Metrics, tracing and testing
//
// The SDK traces its requests through the global OpenTelemetry provider
// (scand's, when tracing is on), under the caller's span.
//
// Config.Observe is called once per Stat, Open, List page, read and
// resumed read, with one of the Op constants; cmd/scand wraps the Bucket
// with storage.WithMetrics (backend "gcs") and counts OpRetry. The tests
// run against fake-gcs-server and toxiproxy, which scripts/install-tools.sh
// installs into .tools/bin; without them they skip.
package gcs
