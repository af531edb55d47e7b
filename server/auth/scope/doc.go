// Package scope decides which file names an identity may read: pure logic,
// no IO and no locks, so a table test pins every case.
//
// # Names and roots
//
// A name is what the server resolved a request to: a path relative to
// --root ("events/2026-01/part-0.parquet") or an object URI
// ("s3://bucket/events/part-0.parquet"). A root is a prefix of names on
// whole path segments:
//
//	root "data/a"              allows "data/a", "data/a/x.parquet"; not "data/ab/x"
//	root "."                   allows every local name
//	root "s3://bucket/team/"   allows "s3://bucket/team/x"; not "s3://bucket/teams/x"
//	root "s3://bucket"         allows the whole bucket
//	root "gs://bucket/team/"   the same for Google Cloud Storage
//	root "az://container/team" the same for an Azure container
//
// A trailing "/" on a root changes nothing: roots always mean "this
// segment path and below". Everything (the scope of --auth none) allows
// every canonical local, S3, GCS and Azure name; it has no spelling in the identities
// file, where buckets are always named.
//
// # What it defends against
//
// Reading outside one's scope by naming a file directly, by a glob, or by a
// name that only looks inside: a local name that is not in canonical form
// ("data/a/../../b", "/etc/passwd", "./x", "a//b") is refused outright, and
// so is an object key with a "." or ".." segment, since a store or proxy that
// normalizes URL paths would read another object than the one checked.
// Names with any other scheme are refused (abfss:// included: the server
// turns those into az:// names, storage.Canonical, before asking). Filter drops names outside the
// scope silently, so the server can expand a glob and return only what the
// identity may see, as if the rest did not exist.
//
// # What it leaves to the caller
//
// Asking before touching storage: a name asked for directly should be
// checked before the server looks it up, so the answer for a name outside
// the scope (PERMISSION_DENIED) is the same whether or not the file exists.
// Resolving names before asking: symlinks inside --root that point outside
// it are the local store's to refuse, and the server must check the names
// it actually opens (the expanded glob, the ticket's path), not the
// pattern the client sent. A symlink inside the root is checked twice: by
// its name and by where it leads (storage.Info.Target), which must both be
// allowed, so a link in a scope cannot lead out of it (the server's
// caller.checkFile). The global allow-lists (--s3-allow, --gcs-allow,
// --azure-allow) are Scopes too; Limit narrows an identity's scope to one
// store's list (LimitS3 to S3's).
package scope
