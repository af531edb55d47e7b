"""Decompresses the chunks TestDumpChunks (scanner/orc/codec_compare_test.go)
dumped from an ORC file with pyarrow's codec, the C++ library (libzstd,
zlib, snappy) pyarrow.orc decodes with, and prints MB/s of decompressed
bytes per second of CPU time, best and median of the passes:

    ORC_CHUNKS_FILE=f.orc ORC_CHUNKS_OUT=/tmp/chunks go test ./scanner/orc -run TestDumpChunks
    python bench/orc/codecs.py /tmp/chunks zstd [passes]
    ORC_CHUNKS_FILE=f.orc go test ./scanner/orc -run XXX -bench FileChunks -count 5   # the same bytes, Go

ORC's zlib chunks are raw deflate, which pyarrow's "gzip" codec does not
take; this compares zstd, snappy and lz4.
"""

import statistics
import struct
import sys
import time

import pyarrow as pa


def main() -> None:
    path, codec = sys.argv[1], sys.argv[2]
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    data = open(path, "rb").read()
    chunks = []
    pos = 0
    while pos < len(data):
        n, size = struct.unpack_from("<II", data, pos)
        pos += 8
        chunks.append((pa.py_buffer(data[pos:pos + n]), size))
        pos += n
    c = pa.Codec(codec)
    total = sum(size for _, size in chunks)
    rates = []
    for _ in range(passes):
        start = time.process_time()
        for buf, size in chunks:
            c.decompress(buf, decompressed_size=size)
        rates.append(total / 1e6 / (time.process_time() - start))
    print(f"{codec}: {len(chunks)} chunks, {total / 1e6:.1f} MB decompressed; pyarrow (C++) MB/s of CPU: "
          f"best {max(rates):.0f}, median {statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
