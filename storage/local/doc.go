// Package local serves objects from a directory tree on local disk. Every
// name is resolved inside the root: "..", absolute paths elsewhere and
// symlinks whose target leaves the root are refused with fs.ErrPermission,
// and a symlink loop with fs.ErrInvalid. Reads use pread on one open
// descriptor, so concurrent ranged reads of a file need no locking; with
// WithMmap they copy from a read-only mapping of the file instead
// (mmap.go).
//
// # Opening beneath the root
//
// A name is resolved twice. filepath.EvalSymlinks finds where it leads
// today (so an absolute symlink that stays inside the root still works,
// and one that leaves it is refused with a clear error); then the file is
// opened through an os.Root on the root directory, by the resolved
// root-relative path. os.Root walks the path one component at a time
// without following a link out of the root, so a symlink swapped in
// between the two steps (a race an attacker can win thousands of times a
// second) is followed only when it stays inside, and refused otherwise.
// Stat and List go through the os.Root too, and every check of what was
// opened (a regular file, its version) is made on the open descriptor,
// never again on the path.
//
// # Where a name leads
//
// Stat, List and Open report in storage.Info.Target where a name's links
// lead, as a root-relative path without links, when that differs from the
// name (a symlinked file, or a file below a symlinked directory). Open
// takes it from the open descriptor (readlink of /proc/self/fd/N on
// Linux), so a link swapped in between resolving and opening shows what
// was really opened. The server checks scopes against it: a link inside
// one identity's scope must not read another's files.
//
// # Versions
//
// A file's Version is its size, modification time (ns), change time (ns)
// and inode and device numbers, taken with one stat. Open compares it
// with the planned version, Object.Recheck compares it again on the open
// descriptor (fstat), and a read that comes back short of the size Open
// saw (a file truncated while read) fails with storage.ErrChanged. The
// change time catches in-place writes that restore the modification time,
// since no unprivileged call can set it back.
//
// What cannot be caught: a write in place that keeps the size and whose
// every timestamp is restored (by changing the system clock, or with
// privileges) between Open and Recheck, and a write that lands between a
// read and the Recheck that follows it only if Recheck is skipped. The
// safe way to update a served dataset is to write each new file elsewhere
// and rename it into place: open handles keep reading the old file, and
// new scans see the new one under a new inode.
package local
