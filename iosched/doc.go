// Package iosched sits between the format readers and storage: it decides
// which bytes of an object are fetched, when, and in how many requests, and
// counts what that cost.
//
// Today it serves a file to a format reader as an io.ReaderAt with two
// economies: one speculative tail read fetches the footer of a Parquet or ORC
// file together with its length and magic (a second read happens only for
// footers larger than the tail), and every read is counted (requests, bytes
// fetched, bytes handed to the decoder, time spent waiting), so each scan can
// report its IO. Range planning and coalescing of column chunks, the adaptive
// hole size and the global memory budget build on this type (see the IO
// scheduler issue); scanners depend on the small reader interface, not on
// how the bytes arrive.
package iosched
