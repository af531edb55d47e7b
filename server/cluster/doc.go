// Package cluster is what lets several scand replicas share one scan: who
// the replicas are (Membership) and which of them should serve each split
// (Ring, the placement). It owns no data path: any replica serves any
// ticket (tickets are self-contained and signed with a key every replica
// shares), so a placement is a preference that turns repeated reads of a
// file into hits of the owner's metadata cache, never a requirement.
//
// # Placement
//
// A Ring is a snapshot of the healthy members' locations (the URIs they
// advertise, such as grpc+tls://10.0.3.7:8815). Ring.Place ranks them by
// rendezvous (highest-random-weight) hashing of a split's Key, the file as
// the ticket names it plus the split's first row group: every member gets
// the score xxhash64(member, key) and the highest wins, then the next.
// Rendezvous hashing was chosen over a ring of virtual nodes because it
// needs no tuning and no state, and because when a member leaves only the
// splits it owned move (to their runner-up, which the endpoints already
// name second); when one joins it takes about 1/n of the splits.
//
// The hash must give the same answer on every replica and in every
// version, or replicas planning the same scan would disagree about owners
// and the caches would be split: it is xxhash64 (XXH64, seed 0) of a fixed
// byte layout (see score), never hash/maphash, whose seed is per process.
// A golden test pins the owners of a fixed set of keys and members; if it
// fails, placement changed for every deployment at once.
//
// Ring is a value, free of locks and IO, and safe for concurrent use.
//
// # Membership
//
// Membership keeps the Ring current. The peers are a static list
// (--peers host:port,...) or the A/AAAA records of a DNS name
// (--peers-dns name:port, a Kubernetes headless Service), resolved every
// ResolveInterval. Each peer is checked with the standard gRPC health
// service (grpc.health.v1.Health/Check, service "") every CheckInterval
// and is in the ring only while its last check answered SERVING: a peer
// that is unreachable, slow (CheckTimeout), or NOT_SERVING because it is
// draining leaves the ring at its first failed check and comes back at its
// first good one; peers out of the ring are redialed and checked every
// RetryInterval (50 ms), so a replica that starts late joins at once. This replica is always in its own ring (under its
// advertised location) while it serves; SetServing(false) takes it out
// when it starts draining.
//
// Membership runs one goroutine, started by Start and stopped by Close;
// each round's checks run in an errgroup of at most checkConcurrency, each
// bounded by CheckTimeout, under a context Close cancels. A DNS failure
// keeps the last good answer (a resolver hiccup must not empty the ring).
//
// Peers are dialed with the trust the server itself is configured with
// (Config.TLS): plaintext when it serves plaintext, TLS verified against
// the given CA otherwise, with the server name of the peer list (the DNS
// name, not the pod's IP, since certificates name the Service).
package cluster
