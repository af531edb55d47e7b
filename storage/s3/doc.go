// Package s3 is scand's storage backend for Amazon S3 and S3-compatible
// stores (MinIO, versitygw, Ceph RGW, ...), on aws-sdk-go-v2. A Bucket
// implements storage.Bucket for names of the form "s3://bucket/key", in any
// bucket its credentials reach; register it with a storage.Mux under
// Scheme:
//
//	b, err := s3.New(ctx, s3.Config{Endpoint: "http://minio:9000", PathStyle: true})
//	mux.Handle(s3.Scheme, b)
//
// # Requests
//
// Stat and Open send a HEAD (size, ETag as Info.Version, Last-Modified as
// ModTime). List pages through ListObjectsV2; S3 returns keys in byte
// order, which is the lexical order the storage contract asks for, and a
// store that breaks that order makes List fail rather than Expand return
// files out of order. Object.ReadAt sends one ranged GET
// ("Range: bytes=a-b") for the bytes asked for, clamped to the size Open
// saw; it keeps no connection or buffer between calls, so calls may run
// concurrently and Close has nothing to release. Objects declare span reads
// (storage.Capabilities.SpanReads: ReadSpans is one ranged GET whose gap
// bytes are dropped as they arrive); their Recheck has nothing to do, since
// every GET carries If-Match. ListPruned lists flat, as List does, and
// applies the pruning to each key: a listing carries sizes and ETags, so
// pruning saves no request.
//
// # Versions: why If-Match
//
// A scan plans its reads from a listing or a Stat, then reads many ranges
// over seconds or minutes. If the object is overwritten in between, ranges
// from two versions would decode into garbage or, worse, plausible wrong
// rows. So every GET carries the planned ETag as If-Match: S3 answers 412
// PreconditionFailed instead of serving bytes of another version, and
// ReadAt returns an error wrapping storage.ErrChanged, which the server
// maps to FailedPrecondition. When the caller already knows size and
// version (a listing, or a DoGet ticket), Open sends no request at all:
// a HEAD would cost a round trip per stream (30 ms and more) to learn
// what the first GET's If-Match checks anyway. Without them Open sends a
// HEAD and compares its ETag with Info.Version. For stores that ignore
// If-Match, each GET also checks the response's ETag and the total size
// in Content-Range.
//
// # Retries
//
// Retries are bounded by Config.MaxAttempts (DefaultMaxAttempts), with
// exponential backoff and jitter capped by Config.MaxBackoff:
//   - The SDK's standard retryer repeats a request until its response
//     headers arrive: throttling (503 SlowDown, which backs off from 1 s),
//     500/502/503/504, connection refused or reset, timeouts. Its retry
//     token bucket stops retries altogether when most requests fail, so an
//     outage fails fast instead of multiplying load.
//   - The SDK does not retry a body that breaks off after the headers (a
//     reset, a proxy closing the connection). ReadAt does: it sends a new
//     ranged GET for the bytes still missing, with the same If-Match. It
//     gives up after MaxAttempts GETs in a row that delivered nothing, or
//     3*MaxAttempts failed GETs in all, and says so in the error.
//   - A GET that receives nothing, headers or body, for
//     Config.StallTimeout (DefaultStallTimeout) is abandoned and retried the
//     same way: a silent connection would otherwise hold a read until the
//     caller's deadline. For HEAD and List, whose answers are small, the
//     same timeout bounds the wait for response headers, and the SDK
//     retries.
//
// Cancelling the ctx of any call aborts its request at once, whatever
// stage it is in, and the call returns ctx.Err() unwrapped; a cancelled
// read is not retried.
//
// # Errors
//
// Errors name the operation and the s3:// URI, and wrap the storage
// sentinels:
//   - NoSuchKey, NoSuchBucket, NotFound (404) wrap fs.ErrNotExist, and the
//     message says whether the bucket or the key is missing (a HEAD 404
//     does not tell, so one ListObjectsV2 of at most one key asks);
//   - AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch,
//     ExpiredToken and other 401/403 answers wrap fs.ErrPermission;
//   - PreconditionFailed (412) wraps storage.ErrChanged;
//   - a store that stays unreachable once the retries are spent (connections
//     refused, reset or timed out, bodies cut short, 500/502/503/504 and
//     SlowDown) wraps storage.ErrUnavailable, at every step: HEAD, List and
//     GET, and the message names the object (or the listed prefix);
//   - names that are not "s3://bucket/key" wrap fs.ErrInvalid, and keys
//     that start with "/" or hold a "." or ".." segment wrap
//     fs.ErrPermission: proxies and stores may clean such request paths
//     and reach another object (with path-style addressing, another
//     bucket) than the one named. List skips such keys.
//
// Messages carry the S3 error code, its message and the request ID, but
// never the endpoint URL, connection addresses or credentials: they reach
// clients through the server. The SDK's error stays in the chain for
// errors.As.
//
// # Metrics
//
// Config.Observe is called once per Stat, Open, List page, ReadAt (with
// the bytes delivered) and retried GET, with one of the Op constants as
// the operation name; a Prometheus wrapper can count, time and label by
// it. Config.WrapTransport sees every HTTP attempt, for metrics by status
// code.
//
// # Testing
//
// The tests run against a real versitygw (an S3 gateway over a temporary
// directory) and put toxiproxy in front of it for latency, resets, cut
// bodies and stalls; scripts/install-tools.sh installs both into
// .tools/bin. Without them the tests skip.
package s3
