package rangecache

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRebuild measures Open on a directory of 10,240 page files, the
// count of a full 10 GiB cache of 1 MiB pages (the files hold a header
// only: the rebuild reads names and sizes, never content).
//
//	go test -run XXX -bench Rebuild ./iosched/rangecache/
func BenchmarkRebuild(b *testing.B) {
	const files = 10240
	dir := b.TempDir()
	c, err := Open(Options{Dir: dir, DiskBytes: 1 << 40, MemoryBytes: 32 << 20, WriteQueueBytes: 32 << 20, Logger: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	c.Close()
	o := Object{Name: "s3://b/k", Version: "v", Size: files << 20}
	obj, ver := o.hashes()
	for p := range int64(files) {
		k := pageKey{obj: obj + uint64(p%256)<<56, ver: ver, page: p}
		path := filepath.Join(dir, k.fileName())
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, encodePage(o.keySum(p, DefaultPageSize), nil), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		c, err := Open(Options{Dir: dir, DiskBytes: 1 << 40, MemoryBytes: 32 << 20, WriteQueueBytes: 32 << 20, Logger: quietLog()})
		if err != nil {
			b.Fatal(err)
		}
		if n := c.disk.pol.small.Len() + c.disk.pol.main.Len(); n != files {
			b.Fatalf("rebuilt %d pages, want %d", n, files)
		}
		c.Close()
	}
}
