"""Reproducible archives and the bundle identity of their canonical listing."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from pipeline import archive
from pipeline.cli import main
from pipeline.findings import FINDINGS_SHOWN

FILES = {
    "cell_a/machine_planning_calibration.json": b'{"a": 1}\n',
    "cell_a/cell.json": b"{}\n",
    "cell_a/description/meshes/link_1.stl": bytes(range(256)) * 40,
    "cell_a/description/robot.urdf": b"<robot/>\n",
}


def test_same_files_give_the_same_bytes_whatever_their_order() -> None:
    reordered = dict(reversed(list(FILES.items())))
    assert archive.archive_bytes(FILES) == archive.archive_bytes(reordered)


def test_gzip_header_has_no_name_and_no_time() -> None:
    data = archive.archive_bytes(FILES)
    assert data[:3] == b"\x1f\x8b\x08"
    assert data[3] == 0  # FLG: no FNAME, no FCOMMENT, no FEXTRA
    assert data[4:8] == b"\x00\x00\x00\x00"  # MTIME 0


def test_entries_are_sorted_with_fixed_metadata() -> None:
    with tarfile.open(fileobj=io.BytesIO(archive.archive_bytes(FILES)), mode="r:gz") as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == sorted(FILES)
        for member in members:
            assert member.isfile()
            assert (member.mtime, member.uid, member.gid) == (0, 0, 0)
            assert (member.uname, member.gname, member.mode) == ("", "", 0o644)
            handle = tar.extractfile(member)
            assert handle is not None and handle.read() == FILES[member.name]


def test_listing_is_domain_then_mode_digest_path_per_entry() -> None:
    text = archive.listing(FILES)
    lines = text.splitlines()
    assert lines[0] == archive.LISTING_DOMAIN and text.endswith("\n")
    digest = hashlib.sha256(b"{}\n").hexdigest()
    assert lines[1] == f"0644 {digest} cell_a/cell.json"
    assert [line.split(" ", 2)[2] for line in lines[1:]] == sorted(FILES)
    identity = archive.identity_of_listing(text)
    assert identity == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_identity_survives_another_deflate() -> None:
    """A different zlib may deflate differently: the listing, read back, is the same."""
    tar = archive.tar_bytes(FILES)
    other = gzip.compress(tar, compresslevel=1, mtime=0)
    assert other != archive.archive_bytes(FILES)
    assert archive.listing_of_archive(other) == archive.listing(FILES)
    assert archive.listing_of_archive(archive.archive_bytes(FILES)) == archive.listing(FILES)


def test_any_content_change_changes_the_identity() -> None:
    changed = {**FILES, "cell_a/cell.json": b"{ }\n"}
    assert archive.identity_of_listing(archive.listing(changed)) != archive.identity_of_listing(
        archive.listing(FILES)
    )


@pytest.mark.parametrize(
    "path", ["", "/abs", "a/../b", "a//b", "./a", "a\\b", "a\nb", "a\tb"], ids=repr
)
def test_unclean_paths_are_refused(path: str) -> None:
    with pytest.raises(ValueError):
        archive.archive_bytes({path: b""})


def test_bundle_identity_command_reads_the_identity_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "cell_a.tar.gz"
    bundle.write_bytes(gzip.compress(archive.tar_bytes(FILES), compresslevel=1, mtime=0))
    assert main(["bundle-identity", str(bundle)]) == 0
    expected = archive.identity_of_listing(archive.listing(FILES))
    assert capsys.readouterr().out == f"{expected}\n"


def test_bundle_identity_of_a_non_archive_is_bad_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "cell_a.tar.gz"
    bundle.write_bytes(b"not gzip")
    assert main(["bundle-identity", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert ": bad_archive: " in err
    # a bundle is often one downloaded, not built here: the fix says both ways to a good one
    assert err.rstrip().endswith(
        "; fetch the bundle again (a download cut short or altered), or package it again from "
        "its cell: doit cell:cell_a"
    ), err


@pytest.mark.parametrize(
    "name", ["x;rm -rf ~.tar.gz", "$(id).tar.gz", "a b.tar.gz", "-x.tar.gz", "x.tgz"]
)
def test_bad_archive_of_a_name_no_cell_has_no_command_to_paste(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """The fix named `doit cell:<the file's name>`, so a bundle fetched as `x;rm -rf ~.tar.gz`
    was told to run `doit cell:x;rm -rf ~` (a review): a name no cell has gets no command."""
    bundle = tmp_path / name
    bundle.write_bytes(b"not gzip")
    assert main(["bundle-identity", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert ": bad_archive: " in err and f"doit cell:{name.removesuffix('.tar.gz')}" not in err
    assert err.rstrip().endswith("or package it again from its cell: `doit cell:<cell_id>`"), err


def test_bad_archive_entries_over_the_unpacked_limit_are_refused_before_reading_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 7 MB gzip of zeros unpacked to 1.5 GB, read whole into memory (1.6 GB resident)."""
    data = archive.archive_bytes(FILES)
    total = sum(len(content) for content in FILES.values())
    assert archive.listing_of_archive(data, limit=total) == archive.listing(FILES)
    with pytest.raises(ValueError, match="hold over"):
        archive.listing_of_archive(data, limit=total - 1)
    monkeypatch.setattr(archive, "UNPACKED_LIMIT", total - 1)
    bundle = tmp_path / "cell_a.tar.gz"
    bundle.write_bytes(data)
    assert main(["bundle-identity", str(bundle)]) == 2
    assert f"bad_archive: is not a cell bundle (its entries hold over {total - 1} bytes)" in (
        capsys.readouterr().err
    )


def test_bundle_identity_hashes_an_entry_as_it_unpacks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """No read of a whole entry: each read asks for at most 1 MiB."""
    big = {"c/big.bin": bytes(5 * 1024 * 1024)}
    sizes: list[int] = []
    original = tarfile.ExFileObject.read

    def spy(self: tarfile.ExFileObject, size: int | None = -1) -> bytes:
        sizes.append(-1 if size is None else size)
        return original(self, size)

    monkeypatch.setattr(tarfile.ExFileObject, "read", spy)
    assert archive.listing_of_archive(archive.archive_bytes(big)) == archive.listing(big)
    assert sizes and all(0 < size <= 1 << 20 for size in sizes)


def test_bad_archive_more_entries_than_the_limit_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """300,000 empty entries (2 MB of gzip) took 14 s and 285 MB; a 256 MiB one, ~35 GB."""
    monkeypatch.setattr(archive, "ENTRY_LIMIT", len(FILES))
    assert archive.listing_of_archive(archive.archive_bytes(FILES)) == archive.listing(FILES)
    more = {**FILES, "cell_a/extra.json": b"{}"}
    with pytest.raises(ValueError, match=f"over {len(FILES)} entries"):
        archive.listing_of_archive(archive.archive_bytes(more))


def _tar(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


GOOD = gzip.compress(_tar([("c/cell.json", b"{}")]), mtime=0)
BAD_BUNDLES = [
    # unpacking keeps the last copy: the listing named both
    ("duplicate", gzip.compress(_tar([("a", b"1"), ("a", b"2")])), "appears more than once"),
    # no folder holds both a file d and a file d/x: it cannot be unpacked
    ("file_then_folder", gzip.compress(_tar([("d", b"1"), ("d/x", b"2")])), "lies in 'd', a file"),
    ("folder_then_file", gzip.compress(_tar([("d/x", b"1"), ("d", b"2")])), "also a folder"),
    # names that sort between `d` and `d/x` (`-`, `.` and `!` sort before `/`) hide no clash
    (
        "file_then_folder_past_siblings",
        gzip.compress(_tar([("a/d", b"1"), ("a/d!", b""), ("a/d-x/y", b""), ("a/d/x/y", b"2")])),
        "archive entry 'a/d/x/y' lies in 'a/d', a file",
    ),
    (
        "folder_then_file_past_siblings",
        gzip.compress(_tar([("a/d/x", b"1"), ("a/d.x", b""), ("a/d", b"2")])),
        "archive entry 'a/d' is also a folder",
    ),
    ("duplicate_past_siblings", gzip.compress(_tar([("d", b""), ("d!", b""), ("d", b"")])), "more"),
    # the gzip trailer (CRC, length) cut off: the entries were whole, so it was accepted
    ("cut_trailer", GOOD[:-4], "end-of-stream marker"),
    # a second gzip member after the end-of-archive block: content the identity skipped
    ("hidden_member", GOOD + gzip.compress(_tar([("b", b"2")])), "data after the end"),
    ("trailing_garbage", GOOD + b"garbage", "Not a gzipped file"),
    # a name of bytes that are no UTF-8: Python's "'utf-8' codec can't encode character..."
    (
        "name_not_utf8",
        gzip.compress(_tar([("c/cell.json", b"{}"), ("c/a\udcffb.stl", b"")])),
        "archive entry name 'c/a\\udcffb.stl' is not UTF-8",
    ),
]


@pytest.mark.parametrize(
    ("case", "data", "why"), BAD_BUNDLES, ids=[case for case, _, _ in BAD_BUNDLES]
)
def test_bad_archive_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, data: bytes, why: str
) -> None:
    bundle = tmp_path / "cell_a.tar.gz"
    bundle.write_bytes(GOOD)
    assert main(["bundle-identity", str(bundle)]) == 0
    bundle.write_bytes(data)
    capsys.readouterr()
    assert main(["bundle-identity", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert ": bad_archive: is not a cell bundle (" in err and why in err, case


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({}, "a bundle's entries all lie in one folder, <cell_id>/ (it has none)"),
        ({"a/x": b"", "b/cell.json": b"{}"}, "a bundle's entries all lie in one folder"),
        ({"cell.json": b"{}"}, "a bundle's entries all lie in one folder"),
        ({"a/x": b""}, "it holds no a/cell.json"),
        (
            {**FILES, "cell_a/description/meshes/LINK_1.stl": b""},
            "entries 'cell_a/description/meshes/LINK_1.stl' and "
            "'cell_a/description/meshes/link_1.stl' differ only in case or Unicode form",
        ),
        (
            {**FILES, "cell_a/\u00e9.json": b"", "cell_a/e\u0301.json": b""},
            # shown escaped: the two looked the same
            "entries 'cell_a/e\\u0301.json' and 'cell_a/\\xe9.json' differ only in case or Unicode",
        ),
    ],
    ids=["empty", "two_folders", "file_at_top", "no_cell_json", "case", "unicode_form"],
)
def test_bad_archive_that_is_no_cell_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, bytes], why: str
) -> None:
    """bundle-identity printed an identity for any archive: empty, of other files, or of names
    that macOS and Windows unpack as one file (hostile-input trial)."""
    bundle = tmp_path / "cell_a.tar.gz"
    bundle.write_bytes(archive.archive_bytes(files))
    assert main(["bundle-identity", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert ": bad_archive: is not a cell bundle (" in err and why in err, err


def _bundle(entries: list[tuple[str, int]]) -> bytes:
    """A gzip of `c/cell.json` and one entry per (name, mode), each holding b"x"."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, mode in [("c/cell.json", 0o644), *entries]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = 1, mode
            tar.addfile(info, io.BytesIO(b"x"))
    data = buffer.getvalue()
    for name, mode in entries:  # tarfile writes mode & 0o7777: a mode over it by hand
        if mode <= 0o7777:
            continue
        at = data.index(name.encode() + b"\0")  # its header (a short ASCII name: no pax one)
        block = bytearray(data[at : at + 512])
        block[100:108] = b"%07o\0" % mode
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\0 " % sum(block)
        data = data[:at] + bytes(block) + data[at + 512 :]
    return gzip.compress(data, mtime=0)


WINDOWS = "which no Windows file name can hold"
# (case, entries (name, mode), what each line of the refusal says): bundle-identity printed an
# identity for each (a hostile-input trial); a machine could not unpack it as itself
UNPACKABLE = [
    *(
        (f"char_{ord(c):02x}", [(f"c/a{c}b.stl", 0o644)], [f"holds {c!r}, {WINDOWS}"])
        for c in ':*?"<>|'
    ),
    ("trailing_dot", [("c/mesh.stl.", 0o644)], ["ends in a dot or a space, which Windows strips"]),
    ("trailing_space", [("c/mesh.stl ", 0o644)], ["ends in a dot or a space"]),
    ("device", [("c/CON", 0o644)], ["'CON' is the name of a Windows device"]),
    ("device_extension", [("c/nul.txt", 0o644)], ["'nul.txt' is the name of a Windows device"]),
    ("device_folder", [("c/Aux/x.stl", 0o644)], ["'Aux' is the name of a Windows device"]),
    ("name_256_bytes", [("c/" + "a" * 256, 0o644)], ["is 256 bytes long, over the 255"]),
    ("name_utf8_256_bytes", [("c/" + "\u00e9" * 128, 0o644)], ["is 256 bytes long"]),
    ("path_4096_bytes", [("c/" + "a/" * 2046 + "bb", 0o644)], ["path is 4096 bytes long, over"]),
    ("setuid", [("c/x.stl", 0o4755)], ["has mode 4755 (set-user-ID, executable)"]),
    ("setgid", [("c/x.stl", 0o2644)], ["has mode 2644 (set-group-ID)"]),
    ("sticky", [("c/x.stl", 0o1644)], ["has mode 1644 (sticky)"]),
    ("no_permission", [("c/x.stl", 0o000)], ["has mode 0000 (unreadable by its owner)"]),
    ("group_writable", [("c/x.stl", 0o664)], ["has mode 0664 (group-writable)"]),
    ("world_writable", [("c/x.stl", 0o646)], ["has mode 0646 (world-writable)"]),
    ("executable", [("c/x.stl", 0o755)], ["has mode 0755 (executable)"]),
    ("file_type_bits", [("c/x.stl", 0o100644)], ["has mode 100644 (file type bits)"]),
    # one line per problem: two entries, two problems of one entry
    ("two_entries", [("c/a:b", 0o644), ("c/x", 0o666)], ["'a:b' holds", "has mode 0666"]),
    ("two_in_one", [("c/a*b", 0o600)], ["'a*b' holds", "has mode 0600"]),
]


@pytest.mark.parametrize(
    ("case", "entries", "whys"), UNPACKABLE, ids=[case for case, _, _ in UNPACKABLE]
)
def test_bad_archive_an_entry_no_machine_unpacks_as_itself(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    entries: list[tuple[str, int]],
    whys: list[str],
) -> None:
    bundle = tmp_path / "c.tar.gz"
    bundle.write_bytes(_bundle(entries))
    assert main(["bundle-identity", str(bundle)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(whys), lines
    for line, why in zip(lines, whys, strict=True):
        assert line.startswith(f"{bundle}: bad_archive: is not a cell bundle (entry 'c/"), line
        assert why in line, (case, line)
        assert line.endswith("or package it again from its cell: doit cell:c"), line


def _owned(attributes: dict[str, object], pax: dict[str, str], glob: dict[str, str]) -> bytes:
    """A gzip of `c/cell.json` and `c/x.stl`, the latter with these TarInfo `attributes` and
    `pax` records, the archive with these global pax records."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, pax_headers=glob) as tar:
        for name in ("c/cell.json", "c/x.stl"):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = 1, 0o644, 0, 0
            info.uname = info.gname = ""
            if name == "c/x.stl":
                for key, value in attributes.items():
                    setattr(info, key, value)
                info.pax_headers = dict(pax)
            tar.addfile(info, io.BytesIO(b"x"))
    return gzip.compress(buffer.getvalue(), mtime=0)


# (case, TarInfo attributes, pax records, global pax records, what the refusal says): the
# compiler writes uid and gid 0, no owner names and no records but a long name's `path`;
# bundle-identity printed an identity for each (a review), and GNU tar run as root unpacked the
# file owned by uid 1234, who could then change a cell's file
OWNED = [
    ("uid", {"uid": 1234}, {}, {}, "is owned by user 1234"),
    ("gid", {"gid": 50}, {}, {}, "is owned by group 50"),
    ("uname", {"uname": "mallory"}, {}, {}, "names its owner 'mallory'"),
    ("gname", {"gname": "staff"}, {}, {}, "names its group 'staff'"),
    ("xattr", {}, {"SCHILY.xattr.user.note": "x"}, {}, "'SCHILY.xattr.user.note'"),
    ("acl", {}, {"SCHILY.acl.access": "user::rw-"}, {}, "'SCHILY.acl.access'"),
    ("global", {}, {}, {"comment": "hi"}, "global pax records ('comment')"),
]


@pytest.mark.parametrize(
    ("case", "attributes", "pax", "glob", "why"), OWNED, ids=[case for case, *_ in OWNED]
)
def test_bad_archive_an_entry_with_an_owner_or_extended_attributes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    attributes: dict[str, object],
    pax: dict[str, str],
    glob: dict[str, str],
    why: str,
) -> None:
    bundle = tmp_path / "c.tar.gz"
    bundle.write_bytes(_owned(attributes, pax, glob))
    assert main(["bundle-identity", str(bundle)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{bundle}: bad_archive: is not a cell bundle ("), lines
    assert why in lines[0], (case, lines[0])


# names the compiler can write into a bundle (a mesh's name is any the source file system
# holds that Windows does, warned of when a URI reader misreads it): each still read back
PORTABLE = [
    "c/description/meshes/link_1.stl",
    "c/description/meshes/Link-1.v2_final.STL",
    "c/description/meshes/\u00e9t\u00e9.stl",  # precomposed
    "c/description/meshes/e\u0301.stl",  # decomposed: one name alone is no collision
    "c/description/meshes/link 1.stl",
    "c/description/meshes/link%201#2.stl",
    "c/description/meshes/con_tool.stl",
    "c/description/meshes/a\x85b\u2028c.stl",  # was a traceback: splitlines split the listing
    "c/" + "a" * 255,
    "c/" + "a/" * 2045 + "bb",  # 4094 bytes
]


@pytest.mark.parametrize("name", PORTABLE, ids=ascii)
def test_bundle_identity_reads_back_a_name_the_compiler_can_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    files = {"c/cell.json": b"{}", name: b"x"}
    bundle = tmp_path / "c.tar.gz"
    bundle.write_bytes(archive.archive_bytes(files))
    assert main(["bundle-identity", str(bundle)]) == 0, capsys.readouterr().err
    expected = archive.identity_of_listing(archive.listing(files))
    assert capsys.readouterr().out == f"{expected}\n"


def test_bad_archive_lines_of_entries_that_do_not_unpack_are_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part told once per entry, and at most PROBLEMS_SHOWN lines, then how many more: 10 000
    entries `c/CON/CON/.../f<i>` of 1 000 parts each (a 150 KB bundle) were 10 million lines,
    held at once, and bundle-identity ran out of memory at 4 GB (a review of 28877fe)."""
    devices = [f"{kind}{n}" for kind in ("COM", "LPT") for n in range(10)]
    entries = [(f"c/{'CON/' * 50}{'/'.join(devices)}/f{i}", 0o644) for i in range(20)]
    bundle = tmp_path / "c.tar.gz"
    bundle.write_bytes(_bundle(entries))
    assert main(["bundle-identity", str(bundle)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == archive.PROBLEMS_SHOWN + 1 == FINDINGS_SHOWN, len(lines)
    assert lines[0].count("'CON' is the name") == 1 and "'CON'" not in lines[1], lines[:2]
    more = 20 * 21 - archive.PROBLEMS_SHOWN
    assert f"is not a cell bundle ({more} more problems of its entries" in lines[-1], lines[-1]
