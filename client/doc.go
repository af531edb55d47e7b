// Package client is the Go client of scand, the Arrow Flight server that
// scans Parquet and ORC files.
//
// A scan is one GetFlightInfo call followed by one DoGet per endpoint. scand
// plans a scan as a list of splits (row groups of one file), returns one
// endpoint per split, and the rows of the scan are the DoGet streams of all
// endpoints concatenated in endpoint order. [Client.Scan] hides that: it
// returns an [array.RecordReader] that yields the batches in order while it
// fetches several endpoints at once in the background.
//
//	c, err := client.Dial(ctx, "grpc://127.0.0.1:8815")
//	if err != nil { ... }
//	defer c.Close()
//	scan, err := c.Scan(ctx, &scandv1.ScanRequest{Paths: []string{"trips/*.parquet"}})
//	if err != nil { ... }
//	defer scan.Release()
//	for scan.Next() {
//		rec := scan.RecordBatch() // valid until the next call to Next
//		...
//	}
//	if err := scan.Err(); err != nil { ... }
//	fmt.Println(scan.Stats())
//
// # Tables
//
// [TableRequest] builds the request of a Delta or Iceberg table (its
// location; the server reads the log or metadata and applies deletes), and
// [AtVersion], [AtSnapshotID], [AtRef] and [AsOf] choose an earlier
// snapshot:
//
//	scan, err := c.Scan(ctx, client.TableRequest("warehouse/sales", client.AtVersion(12)))
//
// # Filters
//
// A ScanRequest's row_filter picks the rows: either SQL WHERE text or a
// serialized Substrait ExtendedExpression (as pyarrow writes them). The
// field is a protobuf oneof, so a request carries one form or neither, and
// the server checks and binds it when it plans the scan:
//
//	req := &scandv1.ScanRequest{
//		Paths:     []string{"trips/"},
//		RowFilter: &scandv1.ScanRequest_Filter{Filter: "fare > 10 AND city = 'Paris'"},
//	}
//	// or RowFilter: &scandv1.ScanRequest_FilterSubstrait{FilterSubstrait: msg}
//
// The server skips hive partitions, files and row groups that cannot match
// before reading them; [Plan.Stats] (from [Client.Explain]) says how much
// each level pruned, and [Stats] RowsRead and RowsFiltered how many decoded
// rows the filter then dropped.
//
// With a filter the server cannot tell which endpoints hold the rows a
// limit asks for, so each of its tickets carries the whole limit and the
// client stops once it has that many ([Client.Scan] from the request,
// [Client.ScanInfo] from the tickets): other Flight clients must do the
// same.
//
// # Memory
//
// A scan never holds the whole result. Each running stream buffers at most a
// few batches (see [WithBufferBatches]) and at most [WithConcurrency] streams
// run at once, so a scan holds about concurrency × (buffer + 1) batches no
// matter how large the result is. A slow reader therefore slows the server
// down through gRPC flow control instead of filling memory.
//
// # Batch size
//
// A scan tells the server the largest Flight message it accepts
// (ScanRequest.max_message_bytes, [DefaultMaxMessageBytes] = 8 MiB unless
// the request sets it or [WithMaxMessageBytes] says otherwise), and the
// client's gRPC receive limit is 64 MiB, the server's cap. The server then
// aims batches at half of it, 4 MiB, instead of the 2 MiB a stock client
// gets: half the messages, less server CPU per GB, and a buffered batch
// that holds twice as much. WithMaxMessageBytes(0) sends nothing and gets the stock
// sizes. The caller's request is never changed.
//
// # Failover and resume
//
// An endpoint is read from its locations in order (scand lists the owner
// first, then the runner-up), then from the client's own server: one
// connection per replica, pooled across endpoints and scans, opened with
// the options given to [Dial] (token, TLS) and closed by [Client.Close]. An
// endpoint without locations uses the client's own connection. When a
// replica answers UNAVAILABLE before the first batch, the endpoint moves
// to the next; after batches have arrived, the client asks the next
// replica's "resume" action for a ticket that starts at the next row and
// reads on, so each row comes exactly once. When no replica can resume,
// the scan fails with an [*Error] (code UNAVAILABLE) saying how many rows
// of the endpoint arrived and why it could not go on. [Stats] Failovers
// counts the moves. docs/failover.md has the details.
//
// # Errors
//
// Calls return an [*Error] that keeps the gRPC status code (status.Code and
// errors.As both work) and says in words what went wrong, e.g.
//
//	UNAVAILABLE: scand at 127.0.0.1:8815 is not reachable: ...
//	INVALID_ARGUMENT: unknown column "fair"; available columns: ...
//
// and [Error.Hint] gives advice where the code and message call for some
// (`did you mean "fare"?`); the CLI prints it on a second line, as the
// Python package does.
//
// When the caller's context is cancelled or its deadline passes, calls return
// the context's error unwrapped, so errors.Is(err, context.Canceled) works.
//
// # Stats
//
// The last message of every DoGet stream carries the server's IO figures for
// that stream, a scandv1.StreamStats encoded as JSON application metadata
// (package wire holds the encoding). [Scan.Stats] sums them over the scan's
// endpoints; see [Stats]. To read the figures of a stream fetched with
// another Flight client, decode its last app_metadata with
// wire.UnmarshalStats and convert it with [StatsOf].
//
// # Receiving
//
// [Dial] receives with [ReceiveOptions]: [ZeroCopyCodec], the receive half
// of package wire's message layout, a gRPC buffer pool that does not clear
// the buffers it reads frames into, and HTTP/2 windows sized for bulk
// transfer (receive.go). Each DoGet message is received as gRPC's buffers
// (the HTTP/2 frames it arrived in, up to 16 KiB each), and wire.Reader
// builds the batch from them without gathering the message into one
// buffer first.
//
// Received buffers are owned as follows. An Arrow buffer that lies whole
// in one received buffer is a slice of it, and the batch holds a reference
// on that gRPC buffer; an Arrow buffer that straddles two received buffers
// is copied, into memory from [WithAllocator]'s allocator when one is
// given and otherwise from a pool that recycles those copies. Either way
// the memory goes back (to gRPC's pool, to the copy pool or allocator)
// when the last array using it is released: releasing each batch, as
// [Scan.Next] does with the previous one, is what recycles it, and a batch
// retained longer keeps its buffers, and nothing else, alive. Received
// buffers that no batch slices are returned as soon as their message is
// decoded. A batch therefore holds at most about twice its message's
// bytes (the received buffers it slices, which are part of its message,
// and its copies), and usually about once. Types the loader does not build (dictionaries, views, unions,
// run-end encoding) and compressed messages go to arrow-go's IPC reader,
// with the same ownership. [WithGatheringReceive] and [WithStockCodec]
// select the earlier paths, for comparisons.
//
// # Plans
//
// [Client.Explain] plans a scan without reading data: files, endpoints with
// their row groups and rows, totals, an estimate of storage reads, and
// with a filter what its pruning kept ([PlanStats], which the server sends
// as JSON in the FlightInfo's app_metadata, decoded by
// wire.UnmarshalPlanStats; nil from older servers). It
// decodes the server's tickets, which this client may because it ships with
// the server; their format is internal and may change. [Client.ScanInfo]
// runs exactly the explained plan.
//
// A [Client] is safe for concurrent use. A [Scan] is not: to stop a scan from
// another goroutine, cancel the context it was started with.
package client
