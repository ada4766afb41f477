"""Build steps stamped by content: skip when current, make when stale, never half-write."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pipeline.findings import ContractError, Finding
from pipeline.stamps import (
    Stamp,
    Step,
    behind_links,
    changed_inputs,
    read_stamp,
    run_step,
    sha256_bytes,
    stamp_path,
    unsealed,
)
from pipeline.strict_json import dump_json


class Maker:
    """A make function that counts its calls and returns a chosen set of outputs."""

    def __init__(self, outputs: dict[str, bytes]) -> None:
        self.outputs = outputs
        self.calls = 0

    def __call__(self, root: Path) -> dict[str, bytes]:
        self.calls += 1
        return dict(self.outputs)


def refuse(root: Path) -> dict[str, bytes]:
    raise ContractError([Finding("bad", "src/in.txt", "1", "bad input", "fix it")])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "in.txt").write_text("one")
    return tmp_path


def test_stamp_path() -> None:
    assert stamp_path("urdf:abb") == "build/stamps/urdf/abb.json"
    assert stamp_path("index:robots") == "build/stamps/index/robots.json"


def test_a_fifo_in_place_of_a_stamp_is_no_stamp(tree: Path) -> None:
    """A stamp that is not a regular file is unreadable, and reading it never waits for a writer."""
    stamp = tree / stamp_path("t:x")
    stamp.parent.mkdir(parents=True)
    os.mkfifo(stamp)
    assert read_stamp(tree, "t:x") is None


def test_runs_once_then_skips(tree: Path) -> None:
    make = Maker({"build/out.txt": b"made"})
    step = Step("t:x", "doc", ("src/in.txt",), make)
    assert run_step(tree, step) is True
    assert run_step(tree, step) is False
    assert make.calls == 1
    stamp = read_stamp(tree, "t:x")
    assert stamp is not None and set(stamp.outputs) == {"build/out.txt"}
    assert json.loads((tree / step.stamp).read_text())["step"] == "t:x"


def test_changed_input_or_output_remakes(tree: Path) -> None:
    make = Maker({"build/out.txt": b"made"})
    step = Step("t:x", "doc", ("src/in.txt",), make)
    run_step(tree, step)
    (tree / "src" / "in.txt").write_text("two")
    assert run_step(tree, step) is True
    (tree / "build" / "out.txt").write_text("hand edit")
    assert run_step(tree, step) is True
    assert (tree / "build" / "out.txt").read_bytes() == b"made"
    assert make.calls == 3


def test_outputs_no_longer_made_are_removed(tree: Path) -> None:
    make = Maker({"build/a.txt": b"a", "build/b.txt": b"b"})
    step = Step("t:x", "doc", ("src/in.txt",), make)
    run_step(tree, step)
    make.outputs = {"build/a.txt": b"a"}
    (tree / "src" / "in.txt").write_text("two")
    run_step(tree, step)
    assert not (tree / "build" / "b.txt").exists()


def test_refused_input_leaves_previous_outputs_and_stamp(tree: Path) -> None:
    run_step(tree, Step("t:x", "doc", ("src/in.txt",), Maker({"build/out.txt": b"made"})))
    before = (tree / "build").rglob("*")
    snapshot = {p: p.read_bytes() for p in before if p.is_file()}
    (tree / "src" / "in.txt").write_text("broken")
    with pytest.raises(ContractError):
        run_step(tree, Step("t:x", "doc", ("src/in.txt",), refuse))
    assert {p: p.read_bytes() for p in (tree / "build").rglob("*") if p.is_file()} == snapshot


def test_changed_inputs_names_added_and_removed() -> None:
    assert changed_inputs(None, {"a": "1"}) == ["a"]
    from pipeline.stamps import Stamp

    stamp = Stamp("t:x", {"a": "1", "gone": "2"}, {})
    assert changed_inputs(stamp, {"a": "1", "new": "3"}) == ["gone", "new"]


def test_invalid_path_character_an_input_name_not_utf8_is_refused_before_anything_is_written(
    tree: Path,
) -> None:
    """A stamp is JSON: a file name that is not UTF-8 crashed its writing after the outputs."""
    odd = os.fsdecode(b"src/x\xff.txt")
    (tree / odd).write_text("x")
    make = Maker({"build/out.txt": b"made"})
    with pytest.raises(ContractError) as exc:
        run_step(tree, Step("t:x", "doc", ("src/in.txt", odd), make))
    assert [(f.code, f.file) for f in exc.value.findings] == [("invalid_path_character", odd)]
    assert exc.value.findings[0].line().startswith("src/x\\udcff.txt: invalid_path_character: ")
    assert make.calls == 0 and not (tree / "build").exists()


@pytest.mark.parametrize("folder", ["build", "build/sub", "build/stamps", "build/stamps/t"])
def test_a_folder_moved_aside_and_linked_back_is_replaced_and_its_outputs_made_again(
    tree: Path, tmp_path_factory: pytest.TempPathFactory, folder: str
) -> None:
    """A folder of build/ moved out and replaced by a link to it still held the bytes the step
    made: the step was taken as current and the link stayed, so git saw its files deleted."""
    make = Maker({"build/sub/out.txt": b"made"})
    step = Step("t:x", "doc", ("src/in.txt",), make)
    run_step(tree, step)
    aside = tmp_path_factory.mktemp("aside") / "moved"
    (tree / folder).rename(aside)
    (tree / folder).symlink_to(aside)
    before = {p: p.read_bytes() for p in aside.rglob("*") if p.is_file()}
    assert run_step(tree, step) is True
    assert (tree / folder).is_dir() and not (tree / folder).is_symlink()
    assert (tree / "build" / "sub" / "out.txt").read_bytes() == b"made"
    assert read_stamp(tree, "t:x") is not None
    # the link was removed, not what it pointed at
    assert {p: p.read_bytes() for p in aside.rglob("*") if p.is_file()} == before
    assert run_step(tree, step) is False


def test_behind_links_names_the_link_nearest_build_dangling_or_not(tmp_path: Path) -> None:
    (tmp_path / "build" / "real" / "deep").mkdir(parents=True)
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "build" / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "build" / "real" / "gone").symlink_to(tmp_path / "nowhere")
    folders: dict[str, str] = {}
    paths = ["build/real/deep/a", "build/linked/deep/b", "build/real/gone/c", "build/d"]
    assert behind_links(tmp_path, paths, folders) == {
        "build/linked/deep/b": "build/linked",
        "build/real/gone/c": "build/real/gone",
    }
    # each folder looked at once, and nothing below a link (it is not read through)
    assert folders == {
        "build": "",
        "build/real": "",
        "build/real/deep": "",
        "build/linked": "build/linked",
        "build/linked/deep": "build/linked",
        "build/real/gone": "build/real/gone",
    }


@pytest.mark.parametrize("shape", ["folder", "parent-file", "parent-link-out"])
def test_what_stands_in_an_outputs_place_is_removed_and_the_output_written(
    tree: Path, tmp_path_factory: pytest.TempPathFactory, shape: str
) -> None:
    """A hand edit can leave a folder where an output goes, or a file or a link as its folder."""
    step = Step("t:x", "doc", ("src/in.txt",), Maker({"build/sub/out.txt": b"made"}))
    run_step(tree, step)
    outside = tmp_path_factory.mktemp("outside")
    sub = tree / "build" / "sub"
    if shape == "folder":
        (sub / "out.txt").unlink()
        (sub / "out.txt" / "deeper").mkdir(parents=True)
    else:
        (sub / "out.txt").unlink()
        sub.rmdir()
        sub.write_text("x") if shape == "parent-file" else sub.symlink_to(outside)
    assert run_step(tree, step) is True
    assert (sub / "out.txt").read_bytes() == b"made" and not sub.is_symlink()
    assert list(outside.iterdir()) == []  # nothing written through the link


def test_output_unwritable_is_a_finding_naming_the_file(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only build/ (or a full disk) stopped doit with a traceback."""

    def refuse_write(path: Path, data: bytes) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("pipeline.stamps.atomic_write", refuse_write)
    with pytest.raises(ContractError) as exc:
        run_step(tree, Step("t:x", "doc", ("src/in.txt",), Maker({"build/out.txt": b"made"})))
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("output_unwritable", "build/out.txt")
    assert "Permission denied" in finding.message


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (28, "free space on the disk that holds it"),  # ENOSPC
        (27, "raise the file-size limit (`ulimit -f`)"),  # EFBIG
        (30, "make build/ (its folders and files) writable"),  # EROFS
    ],
)
def test_output_unwritable_says_what_to_do_for_the_cause(
    tree: Path, monkeypatch: pytest.MonkeyPatch, code: int, fix: str
) -> None:
    """A full disk was answered with "make build/ writable"."""

    def refuse_write(path: Path, data: bytes) -> bool:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr("pipeline.stamps.atomic_write", refuse_write)
    with pytest.raises(ContractError) as exc:
        run_step(tree, Step("t:x", "doc", ("src/in.txt",), Maker({"build/out.txt": b"made"})))
    [finding] = exc.value.findings
    assert (finding.code, finding.hint) == ("output_unwritable", f"{fix} and run again")


def test_a_stamp_git_checked_out_with_crlf_line_endings_is_still_read(tree: Path) -> None:
    step = Step("t:x", "doc", ("src/in.txt",), Maker({"build/out.txt": b"made"}))
    run_step(tree, step)
    stamp = tree / step.stamp
    written = read_stamp(tree, "t:x")
    stamp.write_bytes(stamp.read_bytes().replace(b"\n", b"\r\n"))
    converted = read_stamp(tree, "t:x")
    assert written is not None and converted is not None and converted.crlf
    assert (converted.step, converted.inputs, converted.outputs) == (
        written.step,
        written.inputs,
        written.outputs,
    )


def test_a_stamp_git_converted_to_crlf_is_written_again_as_the_step_wrote_it(tree: Path) -> None:
    # Read for what it records, but not current: left as it is, it stays in build/ (a clean build
    # writes LF) and every step reading it records the digest of the converted bytes.
    maker = Maker({"build/out.txt": b"made"})
    step = Step("t:x", "doc", ("src/in.txt",), maker)
    run_step(tree, step)
    stamp = tree / step.stamp
    written = stamp.read_bytes()
    stamp.write_bytes(written.replace(b"\n", b"\r\n"))
    assert run_step(tree, step)
    assert stamp.read_bytes() == written
    assert not run_step(tree, step)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda d: d["inputs"].update({"src/in.txt": "0" * 64}), id="input_line"),
        pytest.param(lambda d: d["outputs"].update({"build/out.txt": "0" * 64}), id="output_line"),
        pytest.param(lambda d: d.pop("seal"), id="no_seal"),
        pytest.param(lambda d: d.update({"seal": 7}), id="seal_not_text"),
        pytest.param(lambda d: d.update({"seal": "0" * 64}), id="seal_of_nothing"),
    ],
)
def test_a_stamp_whose_seal_does_not_match_is_not_read(tree: Path, edit: Any) -> None:
    """A stamp merged line by line from two branches, or edited by hand, vouches for nothing:
    its step runs again."""
    make = Maker({"build/out.txt": b"made"})
    step = Step("t:x", "doc", ("src/in.txt",), make)
    run_step(tree, step)
    raw = (tree / step.stamp).read_bytes()
    data = json.loads(raw)
    record = {key: data[key] for key in ("step", "inputs", "outputs")}
    assert data["seal"] == sha256_bytes(unsealed(raw) or b"") == sha256_bytes(dump_json(record))
    edit(data)
    (tree / step.stamp).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    assert read_stamp(tree, "t:x") is None
    assert run_step(tree, step) is True and make.calls == 2
    assert read_stamp(tree, "t:x") is not None


@pytest.mark.parametrize(
    ("edit", "read"),
    [
        pytest.param(lambda d: d.pop("seal"), True, id="older_version_unsealed"),
        pytest.param(lambda d: d.update({"seal": "0" * 64}), False, id="seal_of_nothing"),
        pytest.param(lambda d: (d.pop("seal"), d.update({"step": "t:y"})), False, id="other_step"),
        pytest.param(lambda d: (d.pop("seal"), d.update({"extra": 1})), False, id="extra_field"),
    ],
)
def test_an_unsealed_stamp_of_an_older_version_is_read_only_when_asked(
    tree: Path, edit: Any, read: bool
) -> None:
    """Stamps written before seals existed are read when asked (`pipeline check` says "older
    version" of them), but never make the step current: it runs again and seals its stamp."""
    make = Maker({"build/out.txt": b"made"})
    step = Step("t:x", "doc", ("src/in.txt",), make)
    run_step(tree, step)
    data = json.loads((tree / step.stamp).read_bytes())
    edit(data)
    (tree / step.stamp).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    legacy = read_stamp(tree, "t:x", unsealed_ok=True)
    assert (legacy is not None) is read
    if read:
        assert legacy == Stamp("t:x", data["inputs"], data["outputs"])
    assert read_stamp(tree, "t:x") is None
    assert run_step(tree, step) is True and make.calls == 2
    assert read_stamp(tree, "t:x") is not None
