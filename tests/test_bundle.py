"""Cell bundles: dist/<cell_id>.tar.gz and its identity, refused when they cannot be right."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import archive, bundle
from pipeline.bundle import package_cell
from pipeline.cli import main
from pipeline.findings import ContractError, Severity
from pipeline.lock import LOCK_NAME, MARK
from pipeline.session import open_session
from tests.cellrepo import copy_repo
from tests.conftest import refuse_under, run_python, tree_bytes


def test_packaging_a_cell_not_built_is_refused(tmp_path: Path) -> None:
    root = copy_repo(tmp_path)
    (root / "build/cells/iiwa_bench/cell.json").write_text("{}")
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    assert [f.code for f in exc.value.findings] == ["cell_not_built"]
    assert not (root / "dist").exists()


@pytest.mark.parametrize(
    ("limit", "value", "reason"),
    [
        ("ENTRY_LIMIT", 3, "files, over 3"),
        ("UNPACKED_LIMIT", 1000, "bytes, over 1000"),
        ("BUNDLE_LIMIT", 1000, "compresses to"),
    ],
)
def test_bundle_too_large_is_refused_before_writing_a_bundle_that_cannot_be_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str, value: int, reason: str
) -> None:
    """A bundle over a limit of `pipeline bundle-identity` is never written."""
    root = copy_repo(tmp_path)
    package_cell(root, "iiwa_bench")  # within the real limits
    before = (root / "dist/iiwa_bench.tar.gz").read_bytes()
    monkeypatch.setattr(archive, limit, value)
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("bundle_too_large", "build/cells/iiwa_bench")
    assert reason in finding.message
    assert (root / "dist/iiwa_bench.tar.gz").read_bytes() == before


@pytest.mark.parametrize("cell_id", ["iiwa_bench", "weld_cell_a"])
def test_a_bundle_of_a_shipped_cell_reads_back_its_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell_id: str
) -> None:
    """Its names and modes pass bundle-identity's rules: the compiler writes none they refuse."""
    root = copy_repo(tmp_path)
    identity = package_cell(root, cell_id)
    assert main(["bundle-identity", str(root / "dist" / f"{cell_id}.tar.gz")]) == 0
    assert capsys.readouterr().out == f"{identity}\n"
    assert (root / "dist" / f"{cell_id}.identity").read_text() == f"{identity}\n"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("meshes/a:b.stl", "'a:b.stl' holds ':', which no Windows file name can hold"),
        ("meshes/nul.stl", "'nul.stl' is the name of a Windows device"),
        ("meshes/a\tb.stl", "'a\\tb.stl' holds '\\t'"),  # was a ValueError's traceback
    ],
    ids=["colon", "device", "tab"],
)
def test_unportable_file_name_a_cell_serving_one_is_not_packed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, why: str
) -> None:
    """The URDF step copies such a mesh with a warning; bundle-identity refuses its bundle, so
    packaging does too (every bundle it writes reads back), naming the file and the rule."""
    root = copy_repo(tmp_path)
    served = bundle.bundle_files(root, "iiwa_bench")
    path = f"iiwa_bench/description/{name}"
    monkeypatch.setattr(bundle, "bundle_files", lambda *_: {**served, path: b"solid\n"})
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("unportable_file_name", f"build/cells/{path}")
    assert finding.severity == Severity.ERROR
    assert why in finding.message and "a bundle unpacks on Linux, macOS and Windows" in (
        finding.message
    ), finding.message
    assert finding.hint.startswith("rename the source file"), finding.hint
    assert not (root / "dist").exists()


def test_output_unwritable_when_packaging_leaves_the_previous_bundle_and_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full dist/ disk was a traceback, and could leave a new bundle beside an old identity."""
    root = copy_repo(tmp_path)
    package_cell(root, "iiwa_bench")
    (root / "dist/iiwa_bench.identity").write_text("sha256:old\n")
    before = tree_bytes(root / "dist")
    synced: list[int] = []

    def full_on_the_second_file(fd: int) -> None:
        synced.append(fd)
        if len(synced) == 2:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr("pipeline.strict_io.os.fsync", full_on_the_second_file)
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("output_unwritable", "dist/iiwa_bench.tar.gz")
    assert finding.hint == "free space on the disk that holds it and run again"
    assert tree_bytes(root / "dist") == before  # both old, and no temporary file


@pytest.mark.parametrize(
    ("dist", "hint"),
    [
        (
            False,
            "dist/ does not exist and cannot be made in the checkout root: make the checkout "
            "root writable (or create dist/ there, writable by you) and run again",
        ),
        (True, "make dist/ writable and run again"),
    ],
)
def test_output_unwritable_packaging_names_the_folder_that_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dist: bool, hint: str
) -> None:
    """With no dist/ in an unwritable checkout the hint said to make dist/ writable."""
    root = copy_repo(tmp_path)
    if dist:
        (root / "dist").mkdir()
        refuse_under(monkeypatch, "open", root / "dist")  # where the bundle is staged
    else:
        refuse_under(monkeypatch, "mkdir", root / "dist")  # as the checkout root refuses it
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    [finding] = exc.value.findings
    assert (finding.code, finding.file, finding.hint) == (
        "output_unwritable",
        "dist/iiwa_bench.tar.gz",
        hint,
    )
    if dist:
        assert list((root / "dist").iterdir()) == []  # no temporary file left behind
    else:
        assert not (root / "dist").exists()


def test_output_unwritable_packaging_when_dist_is_a_file_names_it(tmp_path: Path) -> None:
    """A file named dist said only the system's "File exists; make dist/ writable"."""
    root = copy_repo(tmp_path)
    (root / "dist").write_text("mine")
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    [finding] = exc.value.findings
    assert (finding.code, finding.file, finding.message, finding.hint) == (
        "output_unwritable",
        "dist/iiwa_bench.tar.gz",
        "cannot be written: dist is a file, not a folder",
        "move the file dist away (a folder goes there) and run again",
    )
    assert (root / "dist").read_text() == "mine"


# packaging killed (SIGKILL) just before one of its renames into place: the report's fault
# injection, where os.replace kills the process when its target ends with a given name
KILLED_AT_RENAME = """
import os, signal, sys
from pathlib import Path
from pipeline.bundle import package_cell

replace = os.replace
def killing(source, target, *args, **kwargs):
    if str(target).endswith(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)
    return replace(source, target, *args, **kwargs)
os.replace = killing
package_cell(Path.cwd(), "iiwa_bench")
"""


@pytest.mark.parametrize("target", ["iiwa_bench.tar.gz", "iiwa_bench.identity"])
def test_packaging_killed_at_a_rename_never_leaves_a_bundle_beside_anothers_identity(
    tmp_path: Path, target: str
) -> None:
    """Killed at the rename of dist/<cell_id>.identity, packaging left the new bundle beside the
    old identity, and its temporary files for good. Now the old identity is set aside first:
    a bundle is beside its own identity or none, and the next doit removes the temporaries."""
    root = copy_repo(tmp_path)
    dist = root / "dist"
    dist.mkdir()
    (dist / "iiwa_bench.tar.gz").write_bytes(b"old bundle")
    (dist / "iiwa_bench.identity").write_text("sha256:old\n")
    (root / LOCK_NAME).write_text(MARK)  # as the killed `doit cell:iiwa_bench` left it
    killed = run_python(root, "-c", KILLED_AT_RENAME, target)
    assert killed.returncode == -9, killed.stderr
    bundle = (dist / "iiwa_bench.tar.gz").read_bytes()
    identity = dist / "iiwa_bench.identity"
    if identity.exists():  # a bundle beside its own identity: here only the old pair can be
        assert (bundle, identity.read_text()) == (b"old bundle", "sha256:old\n")
    with open_session(root):
        pass
    assert sorted(p.name for p in dist.iterdir()) == [
        "iiwa_bench.tar.gz",
        *(["iiwa_bench.identity"] if identity.exists() else []),
    ]
    new = package_cell(root, "iiwa_bench")
    assert identity.read_text() == f"{new}\n"
    assert (dist / "iiwa_bench.tar.gz").read_bytes() != b"old bundle"


@pytest.mark.parametrize("name", ["iiwa_bench.tar.gz", "iiwa_bench.identity"])
def test_output_unwritable_a_folder_in_place_of_the_bundle_or_identity_names_it(
    tmp_path: Path, name: str
) -> None:
    """A folder where the bundle or its identity goes said "Is a directory; make dist/ writable"
    (a hostile-input trial): dist/ was writable, the folder was in the way."""
    root = copy_repo(tmp_path)
    (root / "dist" / name).mkdir(parents=True)
    (root / "dist" / name / "keep").write_text("mine")
    with pytest.raises(ContractError) as exc:
        package_cell(root, "iiwa_bench")
    [finding] = exc.value.findings
    assert (finding.code, finding.file, finding.message, finding.hint) == (
        "output_unwritable",
        f"dist/{name}",
        "cannot be written: a folder is in its place",
        f"move the folder dist/{name} away (a file goes there) and run again",
    )
    assert (root / "dist" / name / "keep").read_text() == "mine"
    assert sorted(p.name for p in (root / "dist").iterdir()) == [name]
