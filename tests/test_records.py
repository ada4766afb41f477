"""Local cache files: a header, NUL-separated fields, a seal; anything unexpected reads as empty."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from pipeline.records import read_columns, write_records


def read_records(path: Path, header: str, width: int) -> list[list[str]]:
    """The records of a file, one list per record, from its columns."""
    return [list(record) for record in zip(*read_columns(path, header, width), strict=True)]


HEADER = "test records 1\0"


def sealed(body: bytes) -> bytes:
    """`body` with the seal a write gives it, so that the case tests what follows the seal."""
    return body + hashlib.sha256(body).hexdigest().encode() + b"\0"


@pytest.mark.parametrize(
    "content",
    [
        None,  # missing
        b"",
        sealed(b"other records 1\0a\0b\0"),  # foreign: another header
        sealed(b"test records 0\0a\0b\0"),  # an older version of the format
        sealed(b"test records 1\0a\0b"),  # torn: the last field not ended
        sealed(b"test records 1\0a\0b\0c\0"),  # torn between records: 3 fields of width 2
        b"test records 1\0a\0b\0",  # unsealed (as this format was before the seal)
        sealed(b"test records 1\0a\0b\0")[:-1],  # torn inside the seal
        sealed(b"test records 1\0a\0b\0").replace(b"\0b\0", b"\0c\0"),  # corrupted
    ],
    ids=[
        "missing",
        "empty",
        "foreign",
        "old-version",
        "torn-field",
        "torn-record",
        "unsealed",
        "torn-seal",
        "corrupted",
    ],
)
def test_a_missing_foreign_torn_or_corrupted_file_reads_as_empty(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "cache"
    if content is not None:
        path.write_bytes(content)
    assert read_records(path, HEADER, 2) == []
    assert read_columns(path, HEADER, 2) == [[], []]


def test_a_folder_in_place_of_the_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    assert read_records(tmp_path / "cache", HEADER, 2) == []


def test_records_round_trip_with_odd_fields(tmp_path: Path) -> None:
    """Spaces, tabs, newlines, empty fields and names that are not UTF-8 survive the file."""
    odd = os.fsdecode(b"robots/\xff\xfe.stl")
    records = [["a b\tc", "line\nbreak"], ["", odd], ["x", "y"]]
    path = tmp_path / "cache"
    assert write_records(path, HEADER, records)
    assert path.read_bytes().startswith(HEADER.encode())
    assert read_records(path, HEADER, 2) == records
    assert read_columns(path, HEADER, 2) == [["a b\tc", "", "x"], ["line\nbreak", odd, "y"]]


def test_no_records_are_written_as_the_header_alone(tmp_path: Path) -> None:
    path = tmp_path / "cache"
    assert write_records(path, HEADER, [])
    assert path.read_bytes() == sealed(HEADER.encode())
    assert read_records(path, HEADER, 2) == []


@pytest.mark.parametrize(
    ("records", "body"),
    [
        ([["a", "b"]], b"a\0b\0"),
        ([["a", "b"], ["c", "d"]], b"a\0b\0c\0d\0"),
        ([["a", ""], ["", ""]], b"a\0\0\0\0"),  # empty fields, the last one too
    ],
    ids=["one", "two", "empty fields"],
)
def test_each_field_is_written_ending_with_nul(
    tmp_path: Path, records: list[list[str]], body: bytes
) -> None:
    path = tmp_path / "cache"
    assert write_records(path, HEADER, records)
    assert path.read_bytes() == sealed(HEADER.encode() + body)


def test_a_write_replaces_the_file_through_a_rename(tmp_path: Path) -> None:
    """A reader holding the old file sees it whole: the new one is a new file renamed in place."""
    path = tmp_path / "cache"
    assert write_records(path, HEADER, [["old", "1"]])
    old = tmp_path / "old-link"
    os.link(path, old)  # the old file's inode, as a reader that opened it holds it
    assert write_records(path, HEADER, [["new", "2"]])
    assert read_records(old, HEADER, 2) == [["old", "1"]]
    assert read_records(path, HEADER, 2) == [["new", "2"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "old-link"]


def test_a_write_that_fails_returns_false_and_leaves_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "cache"
    assert write_records(missing, HEADER, [["a", "b"]]) is False
    assert not missing.parent.exists()
    blocked = tmp_path / "cache"
    blocked.mkdir()  # os.replace cannot put a file over a folder
    (blocked / "inside").write_text("kept")
    assert write_records(blocked, HEADER, [["a", "b"]]) is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    assert (blocked / "inside").read_text() == "kept"


def test_a_sealed_file_reads_back_and_a_flipped_bit_anywhere_empties_it(tmp_path: Path) -> None:
    """A flipped bit in a remembered digest was trusted: the stat signature beside it matched."""
    path = tmp_path / "cache"
    records = [["robots/a/robot.urdf", "1 2 3 4", "ab" * 32]]
    assert write_records(path, HEADER, records)
    good = path.read_bytes()
    assert read_records(path, HEADER, 3) == records
    for index in range(len(good)):
        bad = bytearray(good)
        bad[index] ^= 1
        path.write_bytes(bytes(bad))
        assert read_records(path, HEADER, 3) == [], index
