package parquet

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
)

// Bounding what pqarrow allocates.
//
// arrow-go's page reader sizes its buffers by each page header. Two things
// keep that within what the file can justify:
//
//   - Page limits. Before pqarrow reads row groups, the reader's
//     MaxCompressedPageSize and MaxUncompressedPageSize are set to the
//     largest compressed and uncompressed size the footer declares for any
//     column chunk it will read (never above arrow-go's defaults), so a
//     header that claims more than its chunk is refused before its buffer
//     is allocated. The codecs (codecs.go) never decompress past the
//     declared size.
//   - Charging. Every buffer arrow-go takes from ReaderProperties'
//     allocator (page, decompression and dictionary buffers: what the
//     headers declare) is reserved from the Read's budget first, and given
//     back when arrow-go frees it (what it never frees goes back when the
//     Read ends). Reserve may wait. arrow-go's allocator interface cannot
//     refuse, so when the budget fails the one buffer already asked for is
//     still made (it is within the page limits above), the read is
//     cancelled, and the budget's error is returned after the batch.

// pageLimits are the largest page sizes the footer justifies for a read.
type pageLimits struct{ compressed, uncompressed int64 }

// limitsFor computes the page limits of reading leaves of groups: the
// largest declared chunk sizes, capped at arrow-go's defaults. A chunk
// whose sizes are not positive justifies nothing (a one-byte limit).
func (f *File) limitsFor(groups, leaves []int) pageLimits {
	md := f.pf.MetaData()
	l := pageLimits{compressed: 1, uncompressed: 1}
	for _, g := range groups {
		rg := md.RowGroup(g)
		for _, leaf := range leaves {
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				continue // pqarrow reports it
			}
			l.compressed = max(l.compressed, cc.TotalCompressedSize())
			l.uncompressed = max(l.uncompressed, cc.TotalUncompressedSize())
		}
	}
	l.compressed = min(l.compressed, parquet.DefaultMaxCompressedPageSize)
	l.uncompressed = min(l.uncompressed, parquet.DefaultMaxUncompressedPageSize)
	return l
}

// chargingAllocator is the allocator of a File's ReaderProperties: it
// charges the active Read's account (if any) for what arrow-go allocates
// through it. It is safe for concurrent use (pqarrow opens struct
// children's readers in goroutines).
type chargingAllocator struct {
	inner memory.Allocator

	mu          sync.Mutex
	acct        *account
	cancel      context.CancelFunc
	outstanding int64 // charged to acct and not yet freed
	failed      error // the budget's first refusal in this Read
}

// begin makes acct the account charged until end; cancel stops the read
// when the budget refuses.
func (a *chargingAllocator) begin(acct *account, cancel context.CancelFunc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acct, a.cancel, a.outstanding, a.failed = acct, cancel, 0, nil
}

// end gives back what arrow-go did not free, and returns the budget's
// refusal, if there was one.
func (a *chargingAllocator) end() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acct.release(a.outstanding)
	err := a.failed
	a.acct, a.cancel, a.outstanding, a.failed = nil, nil, 0, nil
	return err
}

// err returns the budget's refusal so far.
func (a *chargingAllocator) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

func (a *chargingAllocator) charge(n int64) {
	if n <= 0 {
		return
	}
	a.mu.Lock()
	acct, failed := a.acct, a.failed
	a.mu.Unlock()
	if acct == nil || failed != nil {
		return
	}
	// Reserve may wait; it must not hold the lock meanwhile.
	err := acct.reserve(n, "Parquet page buffer")
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acct != acct {
		acct.release(n) // the Read ended while we waited
		return
	}
	if err != nil {
		a.failed = err
		if a.cancel != nil {
			a.cancel()
		}
		return
	}
	a.outstanding += n
}

func (a *chargingAllocator) uncharge(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n = min(n, a.outstanding)
	if a.acct == nil || n <= 0 {
		return
	}
	a.outstanding -= n
	a.acct.release(n)
}

func (a *chargingAllocator) Allocate(size int) []byte {
	a.charge(int64(size))
	return a.inner.Allocate(size)
}

func (a *chargingAllocator) Reallocate(size int, b []byte) []byte {
	if d := int64(size) - int64(len(b)); d > 0 {
		a.charge(d)
	} else {
		a.uncharge(-d)
	}
	return a.inner.Reallocate(size, b)
}

func (a *chargingAllocator) Free(b []byte) {
	a.uncharge(int64(len(b)))
	a.inner.Free(b)
}
