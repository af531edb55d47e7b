// Package azure is scand's storage backend for Azure Blob Storage (and
// ADLS Gen2 through its Blob API), on the Azure SDK's azblob. A Bucket
// implements storage.Bucket for one storage account, with names of the
// form "az://container/path"; register it with a storage.Mux under Scheme
// and AliasSchemes:
//
//	b, err := azure.New(ctx, azure.Config{Account: "myacct"})
//	mux.Handle(azure.Scheme, b)
//	for _, s := range azure.AliasSchemes {
//		mux.Handle(s, b)
//	}
//
// # Names
//
// Spark, Hadoop and Iceberg write "abfss://container@account.dfs.core.windows.net/path"
// (and abfs, wasbs, wasb with .blob.core.windows.net). Canonical turns
// those into "az://container/path" when they name the Bucket's account,
// so listings, scopes and tickets see one spelling; another account's URI
// is fs.ErrPermission.
//
// # Requests
//
// Stat and Open send Get Blob Properties (a HEAD: size, ETag as
// Info.Version, Last-Modified). List pages through List Blobs (flat,
// lexical order, with metadata so that the directories of a hierarchical
// namespace, hdi_isfolder, are skipped). Object.ReadAt is one ranged GET,
// and ReadSpans one ranged GET from the first span to the end of the last
// whose gap bytes are dropped as they arrive
// (storage.Capabilities.SpanReads).
//
// # Versions: If-Match
//
// Every GET carries the planned ETag as If-Match: Azure answers 412
// ConditionNotMet instead of bytes of another version, and the read fails
// with storage.ErrChanged (FAILED_PRECONDITION at the server). Each GET
// also checks the ETag and total size of its response, for stores or
// proxies that drop If-Match. When the caller knows size and version, Open
// sends no request.
//
// # Retries
//
// The SDK's retry policy retries each request (429, 5xx, connection
// errors) with exponential backoff capped by Config.MaxBackoff, at most
// Config.MaxAttempts times in all. The SDK does not retry a body that
// breaks off after the headers or goes silent for Config.StallTimeout:
// the backend resumes it with a new ranged GET of the bytes still
// missing, with the same If-Match (storage/internal/ranged), and gives up
// after MaxAttempts GETs in a row that delivered nothing, or 3*MaxAttempts
// failed GETs in all. A store that stays unreachable wraps
// storage.ErrUnavailable, naming the blob. HEAD and List wait at most
// StallTimeout for their response headers.
//
// # Errors
//
// Errors name the operation and the az:// URI and wrap the storage
// sentinels: BlobNotFound is fs.ErrNotExist ("no such blob"),
// ContainerNotFound fs.ErrNotExist naming the container;
// AuthenticationFailed, AuthorizationFailure and other 401/403 answers,
// and an identity that cannot get a token, fs.ErrPermission;
// ConditionNotMet (412) storage.ErrChanged; ServerBusy, 5xx and transport
// failures after the retries storage.ErrUnavailable. The SDK's own error
// text quotes the request URL, SAS token included, so messages carry its
// status and error code only; the error stays in the chain.
//
// # Credentials
//
// In this order: Config.ConnectionString, Config.Key (shared key),
// Config.SAS, Config.Anonymous, or azidentity's DefaultAzureCredential
// (environment, workload identity on AKS, managed identity, the Azure
// CLI). cmd/scand fills them from AZURE_STORAGE_CONNECTION_STRING,
// AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY and AZURE_STORAGE_SAS_TOKEN.
//
// # Metrics, tracing and testing
//
// Each HTTP attempt is a client span ("azure.blob GET") under the caller's
// span, through the global OpenTelemetry provider (scand's, when tracing
// is on), with the blob's path and the status, never the query (a SAS).
//
// Config.Observe is called once per Stat, Open, List page, read and
// resumed GET, with one of the Op constants; cmd/scand wraps the Bucket
// with storage.WithMetrics (backend "azure") and counts OpRetry. The tests
// run against Azurite and toxiproxy, which scripts/install-tools.sh
// installs; without them they skip.
package azure
