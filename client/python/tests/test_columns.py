"""``columns`` as a comma-separated string, as the CLI's ``--columns id,v``."""

from __future__ import annotations

import pytest

import scand
from scand_testlib import assert_tables_equal, local


@pytest.mark.parametrize("columns, want", [
    ("id", ["id"]),
    ("id,v", ["id", "v"]),
    (" id , nested.x,v ", ["id", "nested.x", "v"]),
    (["a,b", "c"], ["a,b", "c"]),  # a list is taken as it is: a name may contain a comma
    ([], []),
    (None, []),
])
def test_normalize_columns(columns, want):
    assert scand.normalize_columns(columns) == want


def test_comma_separated_columns_in_the_request():
    assert scand.build_request("d/", columns="id, v") == {"paths": ["d/"], "columns": ["id", "v"]}


@pytest.mark.parametrize("columns, piece", [("id,,v", "name 2 of 3"), ("id,", "name 2 of 2"),
                                            (" ", "name 1 of 1"), ("", "name 1 of 1")])
def test_an_empty_name_is_an_error_that_says_so(columns, piece):
    with pytest.raises(scand.InvalidRequest) as e:
        scand.build_request("d/", columns=columns)
    msg = str(e.value)
    assert piece in msg and "is empty" in msg and repr(columns) in msg
    assert "remove the extra comma" in msg and "pass None for all columns" in msg


def test_the_server_gets_each_name(conn, root):
    got = conn.read_table("data/a.parquet", columns="id, value,flag")
    assert_tables_equal(local(root, "data/a.parquet").select(["id", "value", "flag"]), got)
    assert conn.last_stats.columns == ["id", "value", "flag"]
    assert conn.schema("data/a.parquet", columns="name,id").names == ["name", "id"]
    assert conn.explain("data/a.parquet", columns="id,flag").columns == ["id", "flag"]
