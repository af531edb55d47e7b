package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/scand/scand/storage"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name        string
		bucket, key string
		wantErr     error
	}{
		{name: "s3://b/k", bucket: "b", key: "k"},
		{name: "s3://my-bucket.x/dir/sub/part-0.parquet", bucket: "my-bucket.x", key: "dir/sub/part-0.parquet"},
		{name: "s3://b/a//b", bucket: "b", key: "a//b"},
		{name: "s3://b/.hidden/..x/x..", bucket: "b", key: ".hidden/..x/x.."},
		{name: "s3://b/with space", bucket: "b", key: "with space"},
		{name: "s3://b", wantErr: fs.ErrInvalid},
		{name: "s3://b/", wantErr: fs.ErrInvalid},
		{name: "s3:///k", wantErr: fs.ErrInvalid},
		{name: "s3://../k", wantErr: fs.ErrInvalid},
		{name: "s3://b?x/k", wantErr: fs.ErrInvalid},
		{name: "gs://b/k", wantErr: fs.ErrInvalid},
		{name: "b/k", wantErr: fs.ErrInvalid},
		{name: "s3://b/..", wantErr: fs.ErrPermission},
		{name: "s3://b/../x", wantErr: fs.ErrPermission},
		{name: "s3://b/a/../../x", wantErr: fs.ErrPermission},
		{name: "s3://b/a/./x", wantErr: fs.ErrPermission},
		{name: "s3://b//etc/passwd", wantErr: fs.ErrPermission},
	}
	for _, tt := range tests {
		bucket, key, err := parseName(tt.name)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("parseName(%q) = %q, %q, %v; want %v", tt.name, bucket, key, err, tt.wantErr)
			}
			continue
		}
		if err != nil || bucket != tt.bucket || key != tt.key {
			t.Errorf("parseName(%q) = %q, %q, %v; want %q, %q", tt.name, bucket, key, err, tt.bucket, tt.key)
		}
		if got := uri(bucket, key); got != tt.name {
			t.Errorf("uri(parseName(%q)) = %q", tt.name, got)
		}
	}
}

func TestParsePrefix(t *testing.T) {
	tests := []struct {
		prefix      string
		bucket, key string
		wantErr     error
	}{
		{prefix: "s3://b", bucket: "b"},
		{prefix: "s3://b/", bucket: "b"},
		{prefix: "s3://b/events/2026-", bucket: "b", key: "events/2026-"},
		{prefix: "s3://b/dir/", bucket: "b", key: "dir/"},
		{prefix: "s3://", wantErr: fs.ErrInvalid}, // what Expand lists for "s3://b*/x"
		{prefix: "s3://b/../", wantErr: fs.ErrPermission},
		{prefix: "s3://b//", wantErr: fs.ErrPermission},
	}
	for _, tt := range tests {
		bucket, key, err := parsePrefix(tt.prefix)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("parsePrefix(%q) = %q, %q, %v; want %v", tt.prefix, bucket, key, err, tt.wantErr)
			}
			continue
		}
		if err != nil || bucket != tt.bucket || key != tt.key {
			t.Errorf("parsePrefix(%q) = %q, %q, %v; want %q, %q", tt.prefix, bucket, key, err, tt.bucket, tt.key)
		}
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		code   string
		status int
		want   error
	}{
		{"NoSuchKey", 404, fs.ErrNotExist},
		{"NoSuchBucket", 404, fs.ErrNotExist},
		{"NotFound", 404, fs.ErrNotExist},
		{"", 404, fs.ErrNotExist},
		{"AccessDenied", 403, fs.ErrPermission},
		{"InvalidAccessKeyId", 403, fs.ErrPermission},
		{"SignatureDoesNotMatch", 403, fs.ErrPermission},
		{"ExpiredToken", 400, fs.ErrPermission},
		{"Forbidden", 403, fs.ErrPermission},
		{"", 403, fs.ErrPermission},
		{"PreconditionFailed", 412, storage.ErrChanged},
		{"", 412, storage.ErrChanged},
		// Throttling and server errors reach callers once the SDK's
		// retries are spent: the store is unavailable.
		{"SlowDown", 503, storage.ErrUnavailable},
		{"InternalError", 500, storage.ErrUnavailable},
		{"", 502, storage.ErrUnavailable},
		{"", 400, nil},
		{"", 0, nil},
	}
	for _, tt := range tests {
		if got := kindOf(tt.code, tt.status); got != tt.want {
			t.Errorf("kindOf(%q, %d) = %v, want %v", tt.code, tt.status, got, tt.want)
		}
	}
}

// TestClassifyTransport checks that failures to reach the store, which
// carry no S3 code or status, are storage.ErrUnavailable, and that other
// errors stay unclassified (INTERNAL at the server's edge).
func TestClassifyTransport(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"reset", reset, storage.ErrUnavailable},
		{"reset after retries", &retry.MaxAttemptsError{Attempt: 3, Err: reset}, storage.ErrUnavailable},
		{"refused", &url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, storage.ErrUnavailable},
		{"timeout", fmt.Errorf("wrapped: %w", os.ErrDeadlineExceeded), storage.ErrUnavailable},
		{"body cut", io.ErrUnexpectedEOF, storage.ErrUnavailable},
		{"something else", errors.New("serialization failed"), nil},
	} {
		if got := classify(tc.err, "", 0); got != tc.want {
			t.Errorf("%s: classify(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestErrorTextHidesEndpoint checks that messages built from SDK errors
// keep the endpoint URL out, and the chain keeps the sentinel and the SDK
// error.
func TestErrorTextHidesEndpoint(t *testing.T) {
	const endpoint = "http://10.1.2.3:7070/bucket/key?x-id=GetObject"
	transport := &smithy.OperationError{
		ServiceID: "S3", OperationName: "GetObject",
		Err: &url.Error{Op: "Get", URL: endpoint, Err: errors.New("dial tcp 10.1.2.3:7070: connect: connection refused")},
	}
	api := &smithy.OperationError{
		ServiceID: "S3", OperationName: "HeadObject",
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 403}},
				Err:      &smithy.GenericAPIError{Code: "AccessDenied", Message: "see " + endpoint},
			},
			RequestID: "R1",
		},
	}
	b := &Bucket{}
	for _, tt := range []struct {
		err      error
		wantKind error
	}{
		{transport, nil},
		{api, fs.ErrPermission},
	} {
		err := b.objectError(context.Background(), "read", "bucket", "key", "", tt.err)
		if strings.Contains(err.Error(), "10.1.2.3:7070/") || strings.Contains(err.Error(), "http://") {
			t.Errorf("message shows the endpoint: %v", err)
		}
		if !strings.Contains(err.Error(), "s3://bucket/key") {
			t.Errorf("message does not name the object: %v", err)
		}
		if tt.wantKind != nil && !errors.Is(err, tt.wantKind) {
			t.Errorf("%v: not %v", err, tt.wantKind)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%v: lost the SDK error", err)
		}
	}
}

func TestNewChecksConfig(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []Config{
		{AccessKey: "a"},
		{SecretKey: "s"},
		{Anonymous: true, AccessKey: "a", SecretKey: "s"},
		{MaxAttempts: -1},
	} {
		if _, err := New(ctx, cfg); err == nil {
			t.Errorf("New(%+v) = nil error", cfg)
		}
	}
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	if _, err := New(ctx, Config{}); err == nil || !strings.Contains(err.Error(), "region") {
		t.Errorf("New without a region = %v, want an error about the region", err)
	}
	b, err := New(ctx, Config{Endpoint: "http://127.0.0.1:1", AccessKey: "a", SecretKey: "s"})
	if err != nil {
		t.Fatalf("New with an endpoint: %v", err)
	}
	if got := b.client.Options().Region; got != "us-east-1" {
		t.Errorf("region = %q, want us-east-1 by default with an endpoint", got)
	}
}
