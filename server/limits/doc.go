// Package limits caps what one key (an identity, a peer address) may use of
// the server at a time: how many streams it holds open (Concurrency) and how
// often it may start a call (Rate).
//
// # What it defends against
//
// One client, authenticated or not, starving the others: opening more
// DoGet streams than the server can serve fairly, or planning scans
// (GetFlightInfo reads footers, which costs IO) in a tight loop. A limit
// refuses the call at once with an error wrapping ErrExceeded, never
// queues it; the server maps ErrExceeded to RESOURCE_EXHAUSTED at its edge,
// and the message names the key and the limit so the client knows what it
// hit and what to do (retry later, open fewer streams).
//
// # What it leaves to the caller
//
// Choosing the key. Per-identity limits are only as good as authentication:
// without it every client may choose its own name, so the server should key
// unauthenticated traffic by peer address instead. Limits are per process;
// replicas behind a load balancer each apply their own, so a deployment's
// effective limit is the per-replica figure times the replicas a client
// reaches.
//
// # Memory
//
// Both types keep state only for keys in use. Concurrency forgets a key when
// its last stream is released. Rate forgets a key once its bucket has
// refilled (burst/rate after its last call): a forgotten key and a fresh one
// behave identically, so eviction never loosens a limit. Memory is therefore
// bounded by the keys active within one refill period.
//
// Both types are safe for concurrent use and do no IO; their clocks are
// injectable so tests can pin behaviour without sleeping.
package limits
