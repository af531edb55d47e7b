// Package deletes removes deleted rows from a table's data files: the rows
// that an Iceberg or Delta table's delete files and deletion vectors name.
// It is table-format neutral: sources (source/iceberg, source/delta) say
// which deletes apply to a file, the stream reads them and asks this
// package to drop the rows.
//
// Three forms of delete, one result each:
//   - Deletion vectors (DecodeDeletionVector, DecodeBitmap): a portable
//     64-bit roaring bitmap of row positions, framed as Iceberg's Puffin
//     "deletion-vector-v1" blob and Delta's deletion-vector files frame it
//     (big-endian length, magic, bitmap, big-endian CRC-32), or bare
//     (magic and bitmap: Delta's inline vectors). The result is a
//     *roaring64.Bitmap.
//   - Position-delete files (Positions.Add): (file_path, pos) rows; the
//     rows naming one data file become a *roaring64.Bitmap of its deleted
//     positions.
//   - Equality-delete files (EqualitySet): rows of key columns; a data row
//     whose key equals one of them is deleted. Nulls equal nulls, as the
//     Iceberg spec has it.
//
// Positions are file-absolute, 0-based row numbers. Apply drops a
// bitmap's rows from a batch given the file position of the batch's first
// row (ApplySpans: of each span of a batch that crosses row groups);
// Select and Take do it for several batches at once, copying their kept
// rows into one batch (runs.go copies each column's kept runs itself).
// The caller must know the positions exactly: a stream that applies position
// deletes reads whole row groups (no page skipping inside a group, no
// early stop at a limit) and counts rows from the groups' row counts; the
// scan's filter and limit come after the deletes.
//
// Memory: everything a delete builds is charged, before it is built, to the
// scanner.Reserver the caller passes, sized from what the input justifies
// (a blob's length, a batch's rows), and given back by Release. A delete
// too large for the budget fails with the Reserver's error, never by
// skipping the delete. Decoding is pure (no IO, no locks); the caller
// fetches the bytes.
package deletes
