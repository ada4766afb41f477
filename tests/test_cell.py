"""Compiled cells: served bytes, cell.json, refusals by `pipeline cell`, `doit cell:<id>`."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.cell import load_cell, make_cell, own_findings
from pipeline.cli import main
from pipeline.findings import ContractError, printable
from pipeline.identity import description_identity
from pipeline.lock import LOCK_NAME, MARK
from tests.cellrepo import (
    PAIR_CELL,
    PAIR_CORRECTIONS,
    PAIR_HOME,
    REPO,
    copy_repo,
    edit_calibration,
    read_doc,
    repin,
    snapshot,
    write_doc,
)
from tests.conftest import refuse_under, run_doit, run_python, tree_bytes
from tests.test_urdf import LOOKALIKE_FOLDERS

CAL = "machine_planning_calibration.json"
PINNED = read_doc(REPO / "cells/weld_cell_a/machine.json")["robot"]["machine_planning_calibration"][
    "sha256"
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository copy in which both example cells have been compiled."""
    root = copy_repo(tmp_path_factory.mktemp("built"))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        for cell in ("weld_cell_a", "iiwa_bench"):
            assert main(["cell", f"cells/{cell}"]) == 0
    finally:
        os.chdir(cwd)
    return root


def test_served_calibration_is_the_pinned_files_bytes(built: Path) -> None:
    served = (built / "build/cells/weld_cell_a" / CAL).read_bytes()
    assert served == (built / "cells/weld_cell_a" / CAL).read_bytes()
    pin = read_doc(built / "cells/weld_cell_a/machine.json")["robot"][
        "machine_planning_calibration"
    ]
    cell = read_doc(built / "build/cells/weld_cell_a/cell.json")
    assert cell["calibration_identity"] == "sha256:" + hashlib.sha256(served).hexdigest()
    assert cell["calibration_pin"]["sha256"] == pin["sha256"] == hashlib.sha256(served).hexdigest()


def test_unpinned_cell_serves_exactly_the_empty_document(built: Path) -> None:
    served = (built / "build/cells/iiwa_bench" / CAL).read_bytes()
    assert served == (
        b'{"schema":"rosie.machine-planning-calibration.v1","model_id":"lbr_iiwa_14_r820"}\n'
    )
    cell = read_doc(built / "build/cells/iiwa_bench/cell.json")
    assert cell["calibration_pin"] is None
    assert cell["calibration_identity"] == "sha256:" + hashlib.sha256(served).hexdigest()


@pytest.mark.parametrize(
    ("cell_id", "model"), [("weld_cell_a", "abb_irb2400"), ("iiwa_bench", "lbr_iiwa_14_r820")]
)
def test_description_is_a_byte_identical_copy(built: Path, cell_id: str, model: str) -> None:
    copy = snapshot(built / "build/cells" / cell_id / "description")
    assert copy == snapshot(built / "build/robots" / model) and copy
    cell = read_doc(built / "build/cells" / cell_id / "cell.json")
    identity, _ = description_identity(built / "build/robots" / model, model)
    assert cell["description_identity"] == identity
    assert cell["robot_cell"] == {
        "model_id": model,
        "description_identity": identity,
        "calibration_identity": cell["calibration_identity"],
    }
    assert (cell["cell_id"], cell["model_id"]) == (cell_id, model)


def test_committed_build_matches_what_the_sources_compile_to(built: Path) -> None:
    assert snapshot(built / "build/cells") == snapshot(REPO / "build/cells")


@pytest.mark.parametrize("cell_id", ["weld_cell_a", "iiwa_bench"])
def test_review_pose_of_a_shipped_cell_is_every_joint_at_0(cell_id: str) -> None:
    """The shipped robots' home is every joint at 0, within their limits: no positions listed."""
    review = read_doc(REPO / "build/cells" / cell_id / "cell.json")["kinematics"]
    assert review["pose"] == "home: every joint at 0"
    assert "joint_positions" not in review


def test_review_pose_is_the_srdf_home_state_within_the_limits(
    off_zero: tuple[Path, dict[str, float]],
) -> None:
    """A cell's review was taken at every joint 0, even where a joint's limits exclude 0."""
    root, positions = off_zero
    review = read_doc(root / "build/cells/weld_cell_a/cell.json")["kinematics"]
    assert review["pose"] == "home: every joint at joint_positions"
    assert review["joint_positions"] == positions
    shipped = read_doc(REPO / "build/cells/weld_cell_a/cell.json")["kinematics"]
    assert review["tip"]["nominal"] != shipped["tip"]["nominal"]
    # the other robot's cell is as committed, byte for byte
    cell = "build/cells/iiwa_bench/cell.json"
    assert (root / cell).read_bytes() == (REPO / cell).read_bytes()


def test_review_of_a_two_arm_cell_covers_both_arms(two_arms: Path) -> None:
    """A cell whose calibration corrected the second arm's joints was reviewed at the first
    arm's tip only, where the corrections moved nothing."""
    review = read_doc(two_arms / f"build/cells/{PAIR_CELL}/cell.json")["kinematics"]
    assert [tip["tip_link"] for tip in review["tips"]] == ["left_tool0", "right_tool0"]
    left, right = (tip["difference"] for tip in review["tips"])
    assert left == {"xyz_m": [0.0, 0.0, 0.0], "distance_m": 0.0, "angle_rad": 0.0}
    assert right["distance_m"] > 1e-3 and right["angle_rad"] == pytest.approx(0.0003, abs=1e-12)
    assert sorted(review["joints"]) == sorted(PAIR_CORRECTIONS)
    assert all(joint["in_tip_chain"] for joint in review["joints"].values())
    assert {n: q for n, q in review["joint_positions"].items() if q} == PAIR_HOME
    # the one-arm cells are as committed, byte for byte
    for cell in ("weld_cell_a", "iiwa_bench"):
        path = f"build/cells/{cell}/cell.json"
        assert (two_arms / path).read_bytes() == (REPO / path).read_bytes()


def test_a_reformatted_calibration_is_served_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_repo(tmp_path)
    compact = b'{"schema":"rosie.machine-planning-calibration.v1","model_id":"abb_irb2400"}'
    (root / "cells/weld_cell_a" / CAL).write_bytes(compact)
    repin(root, "weld_cell_a")
    monkeypatch.chdir(root)
    assert main(["cell", "cells/weld_cell_a"]) == 0
    assert (root / "build/cells/weld_cell_a" / CAL).read_bytes() == compact


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc.pop(key)


def _no_config_then_correct(root: Path) -> None:
    (root / "robots/abb_irb2400/config.json").unlink()
    edit_calibration(root, "weld_cell_a", _drop("kinematics"))
    assert main(["cell", "cells/weld_cell_a"]) == 0  # the build is current before the break


def _machine(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / "cells/weld_cell_a/machine.json"
        doc = read_doc(path)
        change(doc)
        write_doc(path, doc)

    return apply


def _pin(key: str, value: str) -> Callable[[Path], None]:
    return _machine(
        lambda doc: doc["robot"]["machine_planning_calibration"].__setitem__(key, value)
    )


def _cal(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda root: edit_calibration(root, "weld_cell_a", change)


def _cal_text(old: str, new: str) -> Callable[[Path], None]:
    """Replace text in the calibration file (for numbers json.dumps cannot write), re-pin it."""

    def apply(root: Path) -> None:
        path = root / "cells/weld_cell_a" / CAL
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        repin(root, "weld_cell_a")

    return apply


def _symlinked_pin(root: Path) -> None:
    folder = root / "cells/weld_cell_a"
    (folder / CAL).rename(folder / "real.json")
    (folder / CAL).symlink_to("real.json")


def _pinned_folder(root: Path) -> None:
    (root / "cells/weld_cell_a/sub").mkdir()
    _pin("path", "sub")(root)


def _symlinked_folder(root: Path) -> None:
    folder = root / "cells/weld_cell_a"
    (folder / "sub").symlink_to(folder)
    _pin("path", f"sub/{CAL}")(root)


def _unpin(renamed: str | None) -> Callable[[Path], None]:
    """Drop weld_cell_a's pin, leaving its calibration file (renamed) in the folder."""

    def apply(root: Path) -> None:
        _machine(lambda d: d["robot"].pop("machine_planning_calibration"))(root)
        if renamed is not None:
            folder = root / "cells/weld_cell_a"
            (folder / "2026").mkdir()
            (folder / CAL).rename(folder / "2026" / renamed)

    return apply


def _widen(doc: dict[str, Any]) -> None:
    doc["limits"]["joints"]["joint_1"]["upper_rad"] = 3.2


def _over_cap(doc: dict[str, Any]) -> None:
    doc["kinematics"]["joint_2"]["xyz_m"] = [0.0025, 0, 0]


def _correct(doc: dict[str, Any]) -> None:
    doc["kinematics"] = {"joint_2": {"xyz_m": [0.0004, 0, 0], "rpy_rad": [0, 0, 0]}}


REFUSALS: list[tuple[str, Callable[[Path], None] | None, Callable[[Path], None]]] = [
    ("pin_mismatch", None, _pin("sha256", "0" * 64)),
    ("pin_path_outside_cell-dotdot", None, _pin("path", "../iiwa_bench/machine.json")),
    ("pin_path_outside_cell-absolute", None, _pin("path", str(REPO / "cells/weld_cell_a" / CAL))),
    # a pin can never hold the digest of the file that holds it: this gave pin_mismatch and the
    # machine config's fields refused one by one as a calibration's (five lines)
    ("pin_path_outside_cell-machine_json_itself", None, _pin("path", "machine.json")),
    # an editor's backup is not a source: the plan does not list it, so its edits went unseen
    ("ignored_file_name-backup", None, _pin("path", f"{CAL}~")),
    ("ignored_file_name-hidden", None, _pin("path", f".{CAL}")),
    ("symlink_refused", None, _symlinked_pin),
    ("file_missing", None, _pin("path", "nowhere.json")),
    ("not_a_regular_file", None, _pinned_folder),
    ("symlink_refused-folder", None, _symlinked_folder),
    ("invalid_value-pin_not_bare_hex", None, _pin("sha256", "SHA256:" + "0" * 57)),
    # the right digest and a line break: Python's `$` matched before it, so the form passed and
    # the pin was refused as pin_mismatch, "the pin is <hex>\n but ... hashes to <hex>"
    ("invalid_value-pin_with_a_line_break", None, _pin("sha256", f"{PINNED}\n")),
    (
        "invalid_value-cell_id_with_a_line_break",
        None,
        _machine(lambda d: d.__setitem__("cell_id", "weld_cell_a\n")),
    ),
    ("limit_widens", None, _cal(_widen)),
    ("correction_over_cap", None, _cal(_over_cap)),
    ("correction_over_cap-no_config_json", _no_config_then_correct, _cal(_correct)),
    (
        "calibration_model_mismatch",
        None,
        _cal(lambda d: d.__setitem__("model_id", "lbr_iiwa_14_r820")),
    ),
    ("calibration_not_pinned", None, _unpin(None)),
    ("calibration_not_pinned-another_name", None, _unpin("tracker.json")),
    ("unknown_model", None, _machine(lambda d: d["robot"].__setitem__("model_id", "irb9"))),
    ("cell_id_mismatch", None, _machine(lambda d: d.__setitem__("cell_id", "weld_cell_b"))),
    ("unexpected_field", None, _machine(lambda d: d["robot"].__setitem__("tool", "torch"))),
    # these four crashed the pin check (os.lstat, Path.resolve) with a traceback
    ("invalid_path_character-pin_nul", None, _pin("path", "cal\x00.json")),
    # a lone surrogate is refused where the file is read, as in config.json: one line, not two
    ("lone_surrogate-pin_path", None, _pin("path", "\ud800.json")),
    # it passed as a source, and writing cell.json (UTF-8) ended in a traceback
    ("lone_surrogate-source", None, _pin("source", "tracker run \udc07")),
    # an escaped NUL passed as a non-blank source and was copied into cell.json
    ("invalid_text_character-source_nul", None, _pin("source", "tracker run 7\x00")),
    ("invalid_text_character-source_c1", None, _pin("source", "tracker\x85run 7")),
    ("file_missing-pin_name_too_long", None, _pin("path", "a" * 5000)),
    ("file_missing-pin_path_too_long", None, _pin("path", "/".join(["a"] * 3000))),
    # int() refuses over 4300 digits; float() overflows past 1.8e308
    (
        "non_finite_number-integer_of_5000_digits",
        None,
        _cal_text('"speed_ceiling_rad_s": 2.0', '"speed_ceiling_rad_s": 1' + "0" * 5000),
    ),
    (
        "non_finite_number-integer_beyond_a_double",
        None,
        _cal(lambda d: d["limits"]["joints"]["joint_1"].__setitem__("upper_rad", 10**400)),
    ),
    # a key with a line break still gives one line
    (
        "unknown_joint-key_with_a_line_break",
        None,
        _cal(lambda d: d["kinematics"].__setitem__("joint\n2", d["kinematics"].pop("joint_2"))),
    ),
]


@pytest.mark.parametrize(
    ("case", "prepare", "brk"), REFUSALS, ids=[case for case, _, _ in REFUSALS]
)
def test_bad_cell_is_refused_with_one_line_and_build_unchanged(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    prepare: Callable[[Path], None] | None,
    brk: Callable[[Path], None],
) -> None:
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    if prepare is not None:
        prepare(root)
    before = snapshot(root / "build")
    brk(root)
    capsys.readouterr()
    assert main(["cell", "cells/weld_cell_a"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert f": {case.split('-')[0]}: " in lines[0]
    assert lines[0].startswith("cells/weld_cell_a/")
    assert snapshot(root / "build") == before


def test_case_collision_two_cell_folders_differing_only_in_case_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    shutil.copytree(root / "cells/weld_cell_a", root / "cells/Weld_Cell_A")
    before = snapshot(root / "build")
    capsys.readouterr()
    for cell, twin, args in (
        ("Weld_Cell_A", "weld_cell_a", []),  # the new folder's build stops
        ("weld_cell_a", "Weld_Cell_A", ["--check"]),  # the built one is current, not valid
    ):
        assert main(["cell", f"cells/{cell}", *args]) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert line.startswith(f"cells/{cell}: case_collision: cells/{cell} and cells/{twin} ")
    assert snapshot(root / "build") == before


@pytest.mark.parametrize(("name", "shown"), LOOKALIKE_FOLDERS, ids=["latin1", "nfd", "cyrillic"])
def test_cell_id_mismatch_names_the_folder_escaped(repo: Path, name: str, shown: str) -> None:
    """The trial's cells/c\u00e9 was named as typed, a robot folder escaped: now both escaped,
    so 'c\\xe9' and 'ce\\u0301' (which both look like c\u00e9) tell apart."""
    shutil.copytree(repo / "cells/weld_cell_a", repo / "cells" / name)
    with pytest.raises(ContractError) as exc:
        load_cell(repo, name)
    [finding] = [f for f in exc.value.findings if f.code == "cell_id_mismatch"]
    assert finding.message == f"cell_id 'weld_cell_a' differs from the folder name '{shown}'"


@pytest.mark.parametrize("name", ["CON", "prn", "Aux", "nul.cell", "COM7", "lpt1"])
def test_invalid_value_cell_id_windows_device_name(repo: Path, name: str) -> None:
    """cells/CON compiled on Linux; a checkout on Windows then failed at that folder."""
    shutil.copytree(repo / "cells/weld_cell_a", repo / "cells" / name)
    machine = repo / "cells" / name / "machine.json"
    write_doc(machine, {**read_doc(machine), "cell_id": name})
    with pytest.raises(ContractError) as exc:
        load_cell(repo, name)
    [finding] = exc.value.findings
    assert (finding.code, finding.place) == ("invalid_value", "/cell_id")
    assert finding.file == f"cells/{name}/machine.json"
    assert "Windows device" in finding.message
    assert finding.hint.startswith("rename the cell's folder and its cell_id")


def test_invalid_value_cell_id_trailing_dot(repo: Path) -> None:
    """cells/cell_b. compiled on Linux; Windows drops the dot, so no folder has that name."""
    shutil.copytree(repo / "cells/weld_cell_a", repo / "cells/cell_b.")
    machine = repo / "cells/cell_b./machine.json"
    write_doc(machine, {**read_doc(machine), "cell_id": "cell_b."})
    with pytest.raises(ContractError) as exc:
        load_cell(repo, "cell_b.")
    [finding] = exc.value.findings
    assert (finding.code, finding.place) == ("invalid_value", "/cell_id")
    assert "ends in a dot or a space" in finding.message
    assert finding.hint.endswith("such as cell_b_cell")


def test_check_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    (root / "build/cells").rename(root / "elsewhere")
    assert main(["cell", "cells/iiwa_bench", "--check"]) == 0
    assert "iiwa_bench ok" in capsys.readouterr().out
    assert not (root / "build/cells").exists()


# a folder chmod 000 by another user: what is in it cannot be listed, nor stated through it
UNSEARCHABLE = {
    "robots/abb_irb2400": ("stat", "lstat", "scandir", "listdir"),
    "robots": ("scandir", "listdir"),
}


@pytest.mark.parametrize("args", [["--check"], []])
@pytest.mark.parametrize("folder", list(UNSEARCHABLE))
def test_file_unreadable_a_robot_folder_this_user_cannot_search_is_named_by_cell(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    folder: str,
    args: list[str],
) -> None:
    """`pipeline cell --check` said `system_refused` on robot.urdf; the build names the folder."""
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    before = snapshot(root / "build")
    for call in UNSEARCHABLE[folder]:
        refuse_under(monkeypatch, call, root / folder)
    assert main(["cell", "cells/weld_cell_a", *args]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{folder}: file_unreadable: folder cannot be listed or searched")
    assert f"read and search permission on {folder}/" in line
    assert snapshot(root / "build") == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches any folder; simulated above")
@pytest.mark.parametrize("folder", list(UNSEARCHABLE))
def test_file_unreadable_cell_check_names_a_folder_chmod_000(tmp_path: Path, folder: str) -> None:
    root = copy_repo(tmp_path)
    (root / folder).chmod(0)
    try:
        result = run_python(root, "-m", "pipeline", "cell", "--check", "cells/weld_cell_a")
    finally:
        (root / folder).chmod(0o755)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"{folder}: file_unreadable: folder cannot be listed")


def test_file_missing_a_cell_without_machine_json_is_refused_when_compiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pipeline cell cells/<no such cell>` crashed reading a cell.json no step had made."""
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    before = snapshot(root / "build")
    for argv in (["cell", "cells/nosuch"], ["--json", "cell", "cells/nosuch"]):
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("cells/nosuch/machine.json: file_missing: ")
    assert '"code": "file_missing"' in err
    assert snapshot(root / "build") == before


def test_invalid_path_character_a_cell_file_name_not_utf8_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file of the cell folder is an input; a stamp cannot record a name that is not UTF-8."""
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    before = snapshot(root / "build")
    (root / os.fsdecode(b"cells/weld_cell_a/notes\xff.txt")).write_text("x")
    assert main(["cell", "cells/weld_cell_a"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "cells/weld_cell_a/notes\\udcff.txt: invalid_path_character: the file name is not UTF-8 "
        "text, so no stamp can record it; rename the file to a UTF-8 name, or move it out of "
        "the sources"
    ]
    assert snapshot(root / "build") == before


def test_cell_outside_cells_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    assert main(["cell", "robots/abb_irb2400"]) == 2
    assert ": cell_outside_cells: " in capsys.readouterr().err


def test_doit_cell_in_two_clones_gives_identical_archives(tmp_path: Path) -> None:
    first = copy_repo(tmp_path / "clone_one")
    second = copy_repo(tmp_path / "a" / "much" / "deeper" / "clone_two")
    for path in second.rglob("*"):
        os.utime(path, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
    plain = run_doit(first)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert not (first / "dist").exists()  # plain doit compiles cells but packages nothing
    outputs = {}
    for root in (first, second):
        run = run_doit(root, "cell:weld_cell_a")
        assert run.returncode == 0, run.stdout + run.stderr
        identity = (root / "dist/weld_cell_a.identity").read_text()
        assert identity.strip() in run.stdout
        outputs[root] = ((root / "dist/weld_cell_a.tar.gz").read_bytes(), identity)
    assert outputs[first] == outputs[second]
    assert outputs[first][1].startswith("sha256:") and len(outputs[first][1]) == 72


def test_doit_cell_repacks_after_an_upgrade_of_the_archive_code(tmp_path: Path) -> None:
    """doit took dist/ as current after an upgrade that changed only pipeline/archive.py,
    whose bytes a fresh checkout of the new code would pack differently."""
    root = copy_repo(tmp_path)
    first = run_doit(root, "cell:weld_cell_a")
    assert first.returncode == 0 and ".  cell:weld_cell_a" in first.stdout, first.stdout
    assert "-- cell:weld_cell_a" in run_doit(root, "cell:weld_cell_a").stdout
    archive = root / "pipeline" / "archive.py"
    archive.write_text(archive.read_text() + "# upgraded\n")
    again = run_doit(root, "cell:weld_cell_a")
    assert again.returncode == 0 and ".  cell:weld_cell_a" in again.stdout, again.stdout


def test_doit_cell_packs_again_a_bundle_edited_or_replaced_since(tmp_path: Path) -> None:
    """doit only checks that a target exists: an edited dist/<cell_id>.tar.gz was kept."""
    root = copy_repo(tmp_path)
    assert run_doit(root, "cell:weld_cell_a").returncode == 0
    bundle = root / "dist" / "weld_cell_a.tar.gz"
    packed = bundle.read_bytes()
    assert "-- cell:weld_cell_a" in run_doit(root, "cell:weld_cell_a").stdout
    bundle.write_bytes(packed[:-1] + bytes([packed[-1] ^ 1]))
    again = run_doit(root, "cell:weld_cell_a")
    assert again.returncode == 0 and ".  cell:weld_cell_a" in again.stdout, again.stdout
    assert bundle.read_bytes() == packed


def _identity_edited(path: Path) -> None:
    path.write_text("sha256:" + "0" * 64 + "\n")


def _identity_linked(path: Path) -> None:
    """A link to a file of the very bytes packaging wrote: git would commit the link."""
    kept = path.parent.parent / "kept.identity"
    kept.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(kept)


IDENTITY_EDITS = [("edited", _identity_edited), ("linked", _identity_linked)]


@pytest.mark.parametrize(
    "edit", [e for _, e in IDENTITY_EDITS], ids=[case for case, _ in IDENTITY_EDITS]
)
def test_doit_cell_writes_again_an_identity_edited_or_replaced_since(
    tmp_path: Path, edit: Callable[[Path], None]
) -> None:
    """An edited dist/<cell_id>.identity was kept, `doit cell:<cell_id>` saying all was up to
    date (exit 0): the bundle was published beside another identity (a hostile-input trial)."""
    root = copy_repo(tmp_path)
    assert run_doit(root, "cell:weld_cell_a").returncode == 0
    identity = root / "dist" / "weld_cell_a.identity"
    written = identity.read_bytes()
    edit(identity)
    again = run_doit(root, "cell:weld_cell_a")
    assert again.returncode == 0 and ".  cell:weld_cell_a" in again.stdout, again.stdout
    assert not identity.is_symlink() and identity.read_bytes() == written


def test_plain_doit_runs_every_group_but_packaging() -> None:
    spec = importlib.util.spec_from_file_location("dodo_under_test", REPO / "dodo.py")
    assert spec is not None and spec.loader is not None
    dodo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dodo)
    groups = {name.removeprefix("task_") for name in dodo.__all__ if name.startswith("task_")}
    assert "cell" in groups and "cellbuild" in groups
    # `check` only reads build/ and `cell` packages into dist/: both run only when named.
    assert set(dodo.DOIT_CONFIG["default_tasks"]) == groups - {"cell", "check"}


def test_description_not_built_is_refused(tmp_path: Path) -> None:
    root = copy_repo(tmp_path)
    shutil.rmtree(root / "build")
    with pytest.raises(ContractError) as exc:
        make_cell(root, "iiwa_bench")
    assert [f.code for f in exc.value.findings] == ["description_not_built"]


@pytest.mark.parametrize("stray", ["extra.txt", ".DS_Store", "meshes_old/link_1.stl"])
def test_description_not_built_a_cell_serves_only_what_the_description_steps_made(
    tmp_path: Path, stray: str
) -> None:
    # A file no step made, left in build/robots/<id>/, must not reach the cell: its stamp (through
    # the manifest's) vouches only for what the steps made, so `pipeline check` would call the
    # cell current with the stray still in it after the stray itself is deleted.
    root = copy_repo(tmp_path)
    model = root / "build/robots/lbr_iiwa_14_r820"
    (model / stray).parent.mkdir(parents=True, exist_ok=True)
    (model / stray).write_bytes(b"not made by any step\n")
    made = make_cell(root, "iiwa_bench")
    assert f"build/cells/iiwa_bench/description/{stray}" not in made
    # the copies are exactly what the cell held before the stray appeared
    built = {
        p.relative_to(root).as_posix()
        for p in (root / "build/cells/iiwa_bench").rglob("*")
        if p.is_file()
    }
    assert set(made) == built


def test_description_not_built_without_the_manifests_stamp_is_refused(tmp_path: Path) -> None:
    root = copy_repo(tmp_path)
    (root / "build/stamps/manifest/lbr_iiwa_14_r820.json").unlink()
    with pytest.raises(ContractError) as exc:
        make_cell(root, "iiwa_bench")
    assert [f.code for f in exc.value.findings] == ["description_not_built"]


def test_every_finding_is_collected_before_refusing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    path = root / "cells/weld_cell_a" / CAL
    doc = read_doc(path)
    _widen(doc)
    write_doc(path, doc)  # not re-pinned
    _machine(lambda d: d.__setitem__("cell_id", "weld_cell_b"))(root)
    assert main(["cell", "cells/weld_cell_a"]) == 2
    codes = [line.split(": ")[1] for line in capsys.readouterr().err.splitlines()]
    assert codes == ["cell_id_mismatch", "pin_mismatch", "limit_widens"]


def test_cell_clears_what_a_killed_build_left(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pipeline cell` takes the build lock: it must not clear a killed build's mark unhandled.

    Otherwise the next doit believes the last holder finished and never removes the temporary
    files, while `pipeline check` keeps saying the next doit will.
    """
    temp = project / "build/robots/abb_irb2400/.robot.urdf.abcd1234.tmp"
    temp.write_bytes(b"half a file")
    (project / LOCK_NAME).write_text(MARK)  # as a doit killed while holding the lock leaves it
    monkeypatch.chdir(project)
    assert main(["cell", "cells/weld_cell_a"]) == 0
    assert not temp.exists()
    assert main(["check"]) == 0


def test_a_fifo_as_machine_json_is_refused_without_blocking(project: Path) -> None:
    """Planning reads each machine.json for its model; a FIFO there must not hang the build."""
    machine = project / "cells" / "weld_cell_a" / "machine.json"
    before = tree_bytes(project / "build")
    machine.unlink()
    os.mkfifo(machine)
    result = run_doit(project)  # would block forever on open() before the fix
    assert result.returncode == 2, result.stdout + result.stderr
    assert any(
        line.startswith("cells/weld_cell_a/machine.json") for line in result.stdout.splitlines()
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert tree_bytes(project / "build") == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes any folder; simulated above")
def test_output_unwritable_doit_cell_in_a_read_only_checkout_names_its_root(
    project: Path,
) -> None:
    assert run_doit(project).returncode == 0
    project.chmod(0o555)
    try:
        result = run_doit(project, "cell:iiwa_bench")
    finally:
        project.chmod(0o755)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "dist/iiwa_bench.tar.gz: output_unwritable: " in result.stdout
    assert "make the checkout root writable" in result.stdout
    assert not (project / "dist").exists()


def _note(doc: dict[str, Any]) -> None:
    doc["note"] = "tracker run 7"  # not a field of the calibration schema


def _break_urdf(root: Path) -> None:
    urdf = root / "robots/abb_irb2400/robot.urdf"
    limit = '<limit effort="0" lower="-3.1416" upper="3.1416" velocity="2.618"/>'
    urdf.write_text(urdf.read_text().replace(limit, "", 1))


MACHINE = "cells/weld_cell_a/machine.json"
CALIBRATION = f"cells/weld_cell_a/{CAL}"
URDF = "robots/abb_irb2400/robot.urdf"
# (case, calibration edit (re-pinned), machine.json edit, every (file, code) in order)
BOTH: list[tuple[str, Callable[[Path], None], Callable[[Path], None], list[tuple[str, str]]]] = [
    (
        "unexpected_field-machine+limit_widens",
        _cal(_widen),
        _machine(lambda d: d["robot"].__setitem__("tool", "torch")),
        [(MACHINE, "unexpected_field"), (CALIBRATION, "limit_widens")],
    ),
    (
        "invalid_value-cell_id+unexpected_field-calibration",
        _cal(_note),
        _machine(lambda d: d.__setitem__("cell_id", "weld_cell_a\n")),
        [(MACHINE, "invalid_value"), (CALIBRATION, "unexpected_field")],
    ),
    (
        "unknown_model+unexpected_field-calibration",
        _cal(_note),
        _machine(lambda d: d["robot"].__setitem__("model_id", "irb9")),
        [(MACHINE, "unknown_model"), (CALIBRATION, "unexpected_field")],
    ),
    # checking the calibration against the model needs one: limit_widens waits for it
    (
        "unknown_model+limit_widens",
        _cal(_widen),
        _machine(lambda d: d["robot"].__setitem__("model_id", "irb9")),
        [(MACHINE, "unknown_model")],
    ),
    # a digest the schema refuses is not compared, but the path still names the file
    (
        "invalid_value-pin_sha256+unexpected_field-calibration",
        _cal(_note),
        _pin("sha256", "SHA256:" + "0" * 57),
        [(MACHINE, "invalid_value"), (CALIBRATION, "unexpected_field")],
    ),
    (
        "missing_field-pin_source+limit_widens",
        _cal(_widen),
        _machine(lambda d: d["robot"]["machine_planning_calibration"].pop("source")),
        [(MACHINE, "missing_field"), (CALIBRATION, "limit_widens")],
    ),
    (
        "cell_id_mismatch+unexpected_field-calibration+missing_joint_limit",
        _cal(_note),
        lambda root: (
            _machine(lambda d: d.__setitem__("cell_id", "weld_cell_b"))(root),
            _break_urdf(root),
        ),
        [
            (MACHINE, "cell_id_mismatch"),
            (CALIBRATION, "unexpected_field"),
            (URDF, "missing_joint_limit"),
        ],
    ),
]


@pytest.mark.parametrize(
    ("cal", "machine", "expected"), [c[1:] for c in BOTH], ids=[c[0] for c in BOTH]
)
@pytest.mark.parametrize("args", [["--check"], []], ids=["check", "compile"])
def test_a_broken_machine_json_hides_no_finding_of_its_calibration(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cal: Callable[[Path], None],
    machine: Callable[[Path], None],
    expected: list[tuple[str, str]],
    args: list[str],
) -> None:
    """A machine.json refused by its schema, or naming no model, stopped before the calibration
    it pins was read; a refused URDF lost the cell's own findings."""
    if args == [] and any(file == URDF for file, _ in expected):
        pytest.skip("compiling runs the robot's urdf step first, which reports the URDF")
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    before = snapshot(root / "build")
    cal(root)
    machine(root)
    capsys.readouterr()
    assert main(["cell", "cells/weld_cell_a", *args]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [(line.split(":")[0], line.split(": ")[1]) for line in lines] == expected
    assert snapshot(root / "build") == before


def test_own_findings_are_the_cells_and_leave_its_robots_out(repo: Path) -> None:
    """A cell whose robot's URDF is refused: only the findings in the cell's own files."""
    urdf = repo / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.write_text(urdf.read_text(encoding="utf-8").replace("</link>", "</lnk>", 1))
    machine = repo / "cells" / "weld_cell_a" / "machine.json"
    machine.write_text(machine.read_text(encoding="utf-8").replace('"sha256": "8', '"sha256": "9'))
    with pytest.raises(ContractError) as refused:
        load_cell(repo, "weld_cell_a")
    assert {f.code for f in refused.value.findings} == {"invalid_xml", "pin_mismatch"}
    found = own_findings(repo, "weld_cell_a")
    assert [(f.code, f.file) for f in found] == [("pin_mismatch", "cells/weld_cell_a/machine.json")]
    assert own_findings(repo, "iiwa_bench") == []
    urdf.unlink()  # a planned robot without robot.urdf: its step says file_missing
    assert [f.code for f in own_findings(repo, "weld_cell_a")] == ["pin_mismatch"]


@pytest.mark.parametrize(
    ("pinned", "held"),
    [
        (CAL.upper(), repr(CAL)),
        ("cal_e\u0301.json", "'cal_\\xe9.json'"),
        # a space or an invisible character pasted into the pin: the line showed nothing amiss
        (f"{CAL} ", f"{CAL!r}, a name that differs from this one ({CAL + ' '!r}) only in "),
        (f"\u00a0{CAL}", f"{CAL!r}, a name that differs from this one ('\\xa0{CAL}') only in "),
        (CAL.replace(".", "\u200b."), f"{CAL!r}, a name that differs from this one ("),
    ],
    ids=["case", "accent", "trailing-space", "no-break-space", "zero-width-space"],
)
def test_file_missing_a_pin_in_another_case_names_the_file_the_cell_holds(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    pinned: str,
    held: str,
) -> None:
    """A pin written on macOS (which finds a file in either case, or accent encoding) said only
    `file does not exist; create it or correct the path that names it` here, in CI."""
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    folder = root / "cells/weld_cell_a"
    if "\u0301" in pinned:
        (folder / CAL).rename(folder / "cal_\u00e9.json")
    _pin("path", pinned)(root)
    capsys.readouterr()
    assert main(["cell", "cells/weld_cell_a", "--check"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    shown = printable(f"cells/weld_cell_a/{pinned}")  # an invisible character escaped
    assert line.startswith(f"{shown}: file_missing: file does not exist; ")
    assert f"the folder holds {held}" in line
