// Package admission bounds the working memory of the DoGet streams that
// decode at once.
//
// The IO scheduler's budget bounds fetched buffers, but not what decoders
// hold: a Parquet reader keeps, per projected column, a stream buffer, the
// compressed and decompressed page and the values of the batch it builds,
// so a 128-column stream holds tens of MiB whatever the IO scheduler does,
// and sixteen clients with two endpoints each held gigabytes. So every
// stream asks a Controller for an estimate of that memory before it opens
// its decoders (Admit), and waits, holding nothing, while the streams
// already admitted use the decode share. The Grant it gets is also the
// stream's scanner.Reserver: decoders grow it (Reserve) before allocating
// what a file declares, and shrink it (Release) when they free it.
// Work a stream may skip (a file decoded ahead, while the stream holds
// its own grant) asks with TryAdmitFor, which grants only what fits at
// once with nobody waiting and never waits: a holder that waited for a
// second grant could wait for good on peers that each hold their first.
//
// This is not IO, which is why it lives beside the server rather than in
// iosched: the server splits --io-memory between the scheduler's prefetch
// budget and a Controller's capacity (cmd/scand does the arithmetic).
//
// A nil *Controller is valid and means no admission control: Admit grants
// at once and a nil *Grant charges nothing.
package admission
