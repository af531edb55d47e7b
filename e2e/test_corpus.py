"""Files written by other implementations ($SCAND_TESTDATA).

test_corpus_file: every Parquet file of parquet-testing (top level, aes256/,
geospatial/, the *.parquet.encrypted files) and the real Parquet files of
arrow-testing. When pyarrow reads a file locally, scand must return an equal
table (also projected in reverse column order, with a limit, and split per
row group); a file scand cannot read must be listed in KNOWN_UNREADABLE with
the status it answers. When pyarrow cannot read it either, scand must fail
cleanly (or read it).

test_malformed_file: every file of parquet-testing/bad_data and
arrow-testing/parquet/fuzzing: a clean error status or a successful read,
never a crash or a hang; the server must keep serving.

The results of both go to the corpus report (see conftest.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from scandlib import (CLEAN_DATA_ERROR_CODES, CORPUS_RESULTS, NEVER_READ, ScanError, assert_tables_equal, cast_like,
                      scan, table_diff, find_testdata)

# What scand cannot do with some corpus files, by file name. Keep each list
# exact: a listed file that scand then handles like pyarrow fails the test
# until it is removed from the list.
#
# KNOWN_UNREADABLE: pyarrow reads the file, scand answers a clean error with
# this gRPC code, because arrow-go (v18.8.0, the Parquet library scand uses)
# cannot read it either (checked with pqarrow.FileReader.ReadTable directly).
KNOWN_UNREADABLE: dict[str, tuple[str, str]] = {
    "ARROW-17100.parquet": ("DATA_LOSS", "data page v2 written by parquet-cpp < 3.0 with a wrong is_compressed flag "
                            "(ARROW-17100); arrow-go: 'eof reading bytearray'"),
}

# KNOWN_TYPE_DIFFERENCES: scand (arrow-go) returns the same values under a
# different Arrow type than pyarrow. For these files the test casts scand's
# table to pyarrow's schema and then requires equal values.
KNOWN_TYPE_DIFFERENCES: dict[str, str] = {
}

# KNOWN_WRONG: scand (arrow-go) returns a differently shaped result; the test
# is an expected failure (strict: it fails if the results start to match).
KNOWN_WRONG: dict[str, str] = {
}

GOOD_CORPUS_FILE = "parquet-testing/delta_encoding_required_column.parquet"


def _corpus_files() -> list[str]:
    td = find_testdata()
    pt = td / "parquet-testing"
    at = td / "arrow-testing" / "parquet"
    out: list[str] = []
    for pattern in ("*.parquet", "*.parquet.encrypted", "aes256/*.parquet*", "geospatial/*.parquet"):
        out += [f"parquet-testing/{p.relative_to(pt).as_posix()}" for p in sorted(pt.glob(pattern))]
    for pattern in ("*.parquet", "generated_simple_numerics/*.parquet"):
        out += [f"arrow-testing/{p.relative_to(at).as_posix()}" for p in sorted(at.glob(pattern))]
    return out


def _malformed_files() -> list[str]:
    td = find_testdata()
    if not (td / "arrow-testing" / "parquet" / "fuzzing").is_dir():
        return []  # the testdata fixture stops the session with a clear message
    out = [f"parquet-testing/bad_data/{p.name}" for p in sorted((td / "parquet-testing" / "bad_data").glob("*.parquet"))]
    out += [f"fuzzing/{p.name}" for p in sorted((td / "arrow-testing" / "parquet" / "fuzzing").iterdir())
            if p.is_file() and p.name != "README.md"]
    return out


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _good_scan_works(server, client, root: Path) -> None:
    server.assert_alive()
    res = scan(client, {"paths": [GOOD_CORPUS_FILE]})
    assert_tables_equal(pq.read_table(root / GOOD_CORPUS_FILE), res.table, "good scan after an error")


def _scand(client, req, timeout=60.0):
    t0 = time.monotonic()
    try:
        return scan(client, req, timeout=timeout), None, time.monotonic() - t0
    except ScanError as e:
        return None, e, time.monotonic() - t0


def _corpus_params():
    out = []
    for relpath in _corpus_files():
        name = Path(relpath).name
        marks = []
        if name in KNOWN_WRONG:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[name]))
        out.append(pytest.param(relpath, marks=marks, id=relpath))
    return out


@pytest.mark.parametrize("relpath", _corpus_params())
def test_corpus_file(corpus_server, corpus_client, corpus_root, relpath):
    name = Path(relpath).name
    section = "corpus"
    if name in NEVER_READ:
        CORPUS_RESULTS[relpath] = (section, "-", "-", f"skipped: {NEVER_READ[name]}")
        pytest.skip(NEVER_READ[name])
    path = corpus_root / relpath
    try:
        local = pq.read_table(path)
        local_s = f"ok {local.num_rows} rows"
    except Exception as e:  # noqa: BLE001
        local = None
        local_s = f"error {type(e).__name__}: {_short(str(e).replace(str(corpus_root), ''), 80)}"

    res, err, _ = _scand(corpus_client, {"paths": [relpath]})
    scand_s = f"ok {res.table.num_rows} rows" if err is None else f"{err.code}: {_short(err.message)}"

    def record(verdict):
        CORPUS_RESULTS[relpath] = (section, local_s, scand_s, verdict)

    corpus_server.assert_alive()
    if err is not None:
        _good_scan_works(corpus_server, corpus_client, corpus_root)
    known = KNOWN_UNREADABLE.get(name)
    if known is not None:
        code, reason = known
        if err is None:
            diff = table_diff(local, res.table) if local is not None else None
            record(f"FAIL: listed in KNOWN_UNREADABLE but scand read it ({'equal' if diff is None else diff})")
            pytest.fail(f"{relpath} is listed in KNOWN_UNREADABLE ({reason}) but scand read it "
                        f"({'equal to pyarrow' if diff is None else diff}): remove it from the list")
        if err.code != code:
            record(f"FAIL: known unreadable, expected {code}, got {err.code}")
            pytest.fail(f"{relpath}: known unreadable ({reason}): expected {code}, got {err}")
        record(f"known-limit: {reason}")
        return
    if err is not None and err.code not in CLEAN_DATA_ERROR_CODES:
        record(f"FAIL: unclean error status {err.code}")
        pytest.fail(f"{relpath}: scand failed with {err.code} (not one of {sorted(CLEAN_DATA_ERROR_CODES)}): {err}")
    if local is None:
        record("ok-pyarrow-cannot-read: scand " + ("read it" if err is None else "fails cleanly"))
        return
    if err is not None:
        record("FAIL: pyarrow reads it, scand does not")
        pytest.fail(f"{relpath}: pyarrow reads it ({local.num_rows} rows) but scand fails: {err}")

    type_note = KNOWN_TYPE_DIFFERENCES.get(name)

    def compare(expected, got):
        """table_diff, after casting to pyarrow's types for files whose
        types are known to differ."""
        if type_note is not None:
            if table_diff(expected, got) is None:
                return "equal to pyarrow without the cast: remove it from KNOWN_TYPE_DIFFERENCES"
            try:
                got = cast_like(got, expected.schema)
            except Exception as e:  # noqa: BLE001
                return f"cannot cast scand's table to pyarrow's schema: {e}"
        return table_diff(expected, got)

    diff = compare(local, res.table)
    if diff is not None and name in KNOWN_WRONG:
        record(f"known-wrong: {KNOWN_WRONG[name]}")
        pytest.fail(f"{relpath}: scand's table differs from pyarrow's (known: {KNOWN_WRONG[name]}): {diff}")
    if diff is not None:
        record(f"FAIL: values differ: {_short(diff, 200)}")
        pytest.fail(f"{relpath}: scand's table differs from pyarrow's: {diff}")

    # The same file projected (top-level columns in reverse order), limited,
    # and split one endpoint per row group.
    checks = []
    cols = list(reversed(local.column_names))
    if len(cols) > 1:
        checks.append(({"paths": [relpath], "columns": cols}, local.select(cols)))
    if local.num_rows > 1:
        n = max(1, local.num_rows // 2)
        checks.append(({"paths": [relpath], "limit": n}, local.slice(0, n)))
    if pq.ParquetFile(path).metadata.num_row_groups > 1:
        checks.append(({"paths": [relpath], "splitBytes": 1}, local))
    for req, expected in checks:
        r2, e2, _ = _scand(corpus_client, req)
        if e2 is not None:
            record(f"FAIL: {req} -> {e2.code}")
            pytest.fail(f"{req}: {e2}")
        d2 = compare(expected, r2.table)
        if d2 is not None:
            record(f"FAIL: {req}: {_short(d2, 200)}")
            pytest.fail(f"{req}: {d2}")
    record("ok" if type_note is None else f"ok-other-type: same values; {type_note}")


@pytest.mark.parametrize("relpath", _malformed_files())
def test_malformed_file(corpus_server, corpus_client, corpus_root, relpath):
    res, err, took = _scand(corpus_client, {"paths": [relpath]}, timeout=20.0)
    scand_s = f"ok {res.table.num_rows} rows" if err is None else f"{err.code}: {_short(err.message)}"

    def record(verdict):
        CORPUS_RESULTS[relpath] = ("malformed", "-", scand_s, verdict)

    if not corpus_server.alive():
        record("FAIL: server died")
        corpus_server.assert_alive()
    if err is not None and err.code not in CLEAN_DATA_ERROR_CODES:
        record(f"FAIL: unclean error status {err.code}")
        pytest.fail(f"{relpath}: scand failed with {err.code} (not one of {sorted(CLEAN_DATA_ERROR_CODES)}): {err}")
    if took > 10:
        record(f"FAIL: took {took:.1f}s")
        pytest.fail(f"{relpath}: took {took:.1f}s")
    record("ok-read" if err is None else "ok-clean-error")
    _good_scan_works(corpus_server, corpus_client, corpus_root)


def test_malformed_batch_then_good(corpus_server, corpus_client, corpus_root):
    """Runs after the per-file tests: every malformed file back to back, then
    whole folders of them, then a good scan."""
    t0 = time.monotonic()
    for relpath in _malformed_files():
        _, err, _ = _scand(corpus_client, {"paths": [relpath]}, timeout=20.0)
        assert err is None or err.code in CLEAN_DATA_ERROR_CODES, f"{relpath}: {err}"
    for folder in ("fuzzing/", "parquet-testing/bad_data/"):
        _, err, _ = _scand(corpus_client, {"paths": [folder]}, timeout=20.0)
        assert err is None or err.code in CLEAN_DATA_ERROR_CODES, f"{folder}: {err}"
    took = time.monotonic() - t0
    assert took < 60, f"scanning the malformed corpus took {took:.1f}s"
    _good_scan_works(corpus_server, corpus_client, corpus_root)
