"""`pipeline load-check`: a program header's robot_cell block against a compiled cell."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from pipeline.archive import archive_bytes
from pipeline.cli import main
from pipeline.loadcheck import REASONS
from tests.cellrepo import PAIR_CELL, REPO, copy_repo, read_doc

CELL = REPO / "build/cells/weld_cell_a"


def header_of(cell: Path) -> dict[str, Any]:
    """The header a program planned for `cell` carries, with a field other readers own."""
    return {"program": "seam_17", "robot_cell": read_doc(cell / "cell.json")["robot_cell"]}


def run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: Any, cell: Path = CELL
) -> tuple[int, list[str]]:
    program = tmp_path / "program.json"
    program.write_text(json.dumps(header))
    code = main(["load-check", str(program), "--cell", str(cell)])
    captured = capsys.readouterr()
    return code, captured.err.splitlines() + captured.out.splitlines()


@pytest.mark.parametrize("cell", ["weld_cell_a", "iiwa_bench"])
def test_own_header_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str
) -> None:
    folder = REPO / "build/cells" / cell
    code, lines = run(tmp_path, capsys, header_of(folder), folder)
    assert code == 0
    assert len(lines) == 1 and " accepted on " in lines[0]


TAMPERED = [
    ("model_mismatch", "model_id", "lbr_iiwa_14_r820"),
    ("description_mismatch", "description_identity", "sha256:" + "0" * 64),
    ("calibration_mismatch", "calibration_identity", "sha256:" + "1" * 64),
    ("missing_field-absent", "model_id", None),
    ("missing_field-not_a_string", "calibration_identity", 42),
]


@pytest.mark.parametrize(("case", "field", "value"), TAMPERED, ids=[c for c, _, _ in TAMPERED])
def test_each_tampered_field_is_refused_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, field: str, value: Any
) -> None:
    header = header_of(CELL)
    if value is None:
        del header["robot_cell"][field]
    else:
        header["robot_cell"][field] = value
    code, lines = run(tmp_path, capsys, header)
    assert code == 3
    assert len(lines) == 1, lines
    reason = case.split("-")[0]
    assert reason in REASONS
    assert f":/robot_cell/{field}: {reason}: " in lines[0]


def test_a_huge_field_of_a_program_is_refused_in_a_line_of_ordinary_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A program naming a model of 10 MB was refused in a line of 10 MB."""
    header = header_of(CELL)
    header["robot_cell"]["model_id"] = "m" * 10_000_000
    code, lines = run(tmp_path, capsys, header)
    assert code == 3
    assert len(lines) == 1 and ": model_mismatch: " in lines[0] and len(lines[0]) < 6000


def test_file_too_large_a_program_over_the_json_limit_is_told_to_give_its_header_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dense program of 17 MiB was told to 'shrink the file (decimate a mesh, split a
    document)': load-check reads the header alone."""
    header = {**header_of(CELL), "points": [[0.0] * 6] * 600_000}
    code, lines = run(tmp_path, capsys, header)
    assert code == 2 and len(lines) == 1 and ": file_too_large: " in lines[0], lines
    assert "mesh" not in lines[0] and "robot_cell block alone" in lines[0], lines


@pytest.mark.parametrize("header", [{}, {"robot_cell": "weld_cell_a"}], ids=["absent", "string"])
def test_a_header_without_the_block_is_refused_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: dict[str, Any]
) -> None:
    code, lines = run(tmp_path, capsys, header)
    assert code == 3
    assert len(lines) == 1 and ":/robot_cell: missing_field: " in lines[0]


def test_another_cells_program_is_refused_on_every_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(tmp_path, capsys, header_of(REPO / "build/cells/iiwa_bench"))
    assert code == 3
    assert [line.split(": ")[1] for line in lines] == [
        "model_mismatch",
        "description_mismatch",
        "calibration_mismatch",
    ]


def test_a_tampered_cell_is_bad_input_cell_inconsistent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_repo(tmp_path / "repo")
    cell = root / "build/cells/weld_cell_a"
    header = header_of(cell)
    served = cell / "machine_planning_calibration.json"
    served.write_bytes(served.read_bytes() + b" ")
    code, lines = run(tmp_path, capsys, header, cell)
    assert code == 2
    assert len(lines) == 1 and ": cell_inconsistent: " in lines[0]
    # it said `doit cellbuild:<cell_id>`: a placeholder, and a task no page documents
    assert "`doit cell:weld_cell_a` in its repository" in lines[0]


def test_a_program_that_is_not_json_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "program.json"
    program.write_text("{robot_cell")
    assert main(["load-check", str(program), "--cell", str(CELL)]) == 2
    assert ": invalid_json: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "place"),
    [
        # was blamed on description/robot_description_manifest.json (model 'None')
        (lambda doc: doc.__setitem__("robot_cell", 5), "/robot_cell/model_id"),
        (lambda doc: doc["robot_cell"].pop("model_id"), "/robot_cell/model_id"),
        (
            lambda doc: doc["robot_cell"].pop("description_identity"),
            "/robot_cell/description_identity",
        ),
        # was accepted: the top-level copy of a field was never compared
        (lambda doc: doc.pop("model_id"), "/model_id"),
        (lambda doc: doc.__setitem__("description_identity", "sha256:0"), "/description_identity"),
        # an array of another length than the files give is named whole
        (
            lambda doc: doc["kinematics"]["tip"]["calibrated"]["xyz_m"].append(0.0),
            "/kinematics/tip/calibrated/xyz_m",
        ),
    ],
)
def test_cell_inconsistent_a_hand_edited_cell_json_is_named_where_it_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, place: str
) -> None:
    cell = copy_repo(tmp_path / "repo") / "build/cells/weld_cell_a"
    line = refused_after_editing(tmp_path, capsys, cell, change)
    assert line.startswith(f"{cell}/cell.json:{place}: cell_inconsistent: "), line


@pytest.mark.parametrize(
    "change",
    [lambda doc: doc["robot_cell"].pop("model_id"), lambda doc: doc.pop("model_id")],
    ids=["in-the-block", "at-the-top"],
)
def test_cell_inconsistent_a_field_missing_from_cell_json_is_said_to_be_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any
) -> None:
    """It said `cell.json says None`, a Python value no JSON file holds."""
    cell = copy_repo(tmp_path / "repo") / "build/cells/weld_cell_a"
    line = refused_after_editing(tmp_path, capsys, cell, change)
    assert ": cell_inconsistent: cell.json says nothing but the cell's files give " in line
    assert "None" not in line


def refused_after_editing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: Path, change: Any
) -> str:
    """The one line the cell's own header gets once `change` has edited its cell.json."""
    header = header_of(cell)
    doc = read_doc(cell / "cell.json")
    change(doc)
    (cell / "cell.json").write_text(json.dumps(doc))
    code, lines = run(tmp_path, capsys, header, cell)
    assert code == 2
    assert len(lines) == 1, lines
    return lines[0]


def test_a_bad_program_and_a_bad_cell_are_both_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The program's finding stopped the check: the cell's was only seen after fixing it."""
    program = tmp_path / "program.json"
    program.write_text("{robot_cell")
    assert main(["load-check", str(program), "--cell", str(tmp_path / "no_cell")]) == 2
    err = capsys.readouterr().err
    assert ": invalid_json: " in err and "no_cell/cell.json: file_missing: " in err


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{robot_cell", "invalid_json"),
        (b"\xff{}", "not_utf8"),
        (b"", "invalid_json"),
        (None, "file_missing"),
    ],
)
def test_a_bad_cell_json_checked_as_its_own_program_is_reported_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes | None, code: str
) -> None:
    """`load-check <cell>/cell.json --cell <cell>`, the documented check of a cell alone,
    printed each finding of a broken cell.json twice: once as the program, once as the cell's."""
    cell = _unpacked_bundle(tmp_path)
    if data is None:
        (cell / "cell.json").unlink()
    else:
        (cell / "cell.json").write_bytes(data)
    assert main(["load-check", str(cell / "cell.json"), "--cell", str(cell)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "cell.json:" in lines[0] and f": {code}: " in lines[0], lines


def _unpacked_bundle(dest: Path) -> Path:
    """weld_cell_a's bundle, unpacked into `dest` as a cell's software does: no repo beside it."""
    base = REPO / "build/cells"
    files = {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted((base / "weld_cell_a").rglob("*"))
        if p.is_file()
    }
    with tarfile.open(fileobj=io.BytesIO(archive_bytes(files)), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")
    return dest / "weld_cell_a"


def _bundle_file(dest: Path) -> Path:
    bundle = dest / "weld_cell_a.tar.gz"
    bundle.write_bytes(b"\x1f\x8b")
    return bundle


def _unpacked_into(dest: Path) -> Path:
    _unpacked_bundle(dest)
    return dest


# --cell naming what is no compiled cell, as a new user does: what they are told to do
NOT_CELLS = [
    # it said "cannot be read (Not a directory); check the file's permissions"
    ("bundle_file", _bundle_file, "not_a_folder", "unpack it (tar xzf"),
    # it said "file does not exist; create it": cell.json, by hand
    ("source_folder", lambda dest: REPO / "cells/weld_cell_a", "file_missing", "build/cells/"),
    # the folder the bundle was unpacked into, one above the cell's
    ("unpacked_into", _unpacked_into, "file_missing", "weld_cell_a"),
    ("nowhere", lambda dest: dest / "no_cell", "file_missing", "no such folder"),
]


@pytest.mark.parametrize(
    ("make", "code", "fix"), [c[1:] for c in NOT_CELLS], ids=[c[0] for c in NOT_CELLS]
)
def test_a_cell_folder_that_is_no_compiled_cell_says_what_to_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, code: str, fix: str
) -> None:
    cell = make(tmp_path)
    program = tmp_path / "program.json"
    program.write_text(json.dumps(header_of(CELL)))
    assert main(["load-check", str(program), "--cell", str(cell)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and f": {code}: " in lines[0] and fix in lines[0], lines
    assert "create it" not in lines[0] and "permissions" not in lines[0], lines


def _set_pin(field: str, value: Any) -> Any:
    return lambda doc: doc["calibration_pin"].__setitem__(field, value)


# cell.json fields the served files decide, beyond the three identities: each once accepted
CELL_JSON_EDITS = [
    (
        "tip_pose",
        lambda doc: doc["kinematics"]["tip"]["calibrated"]["xyz_m"].__setitem__(0, 0.9),
        # the coordinate, by its index (was the whole array)
        "/kinematics/tip/calibrated/xyz_m/0",
    ),
    (
        "tip_link",
        lambda doc: doc["kinematics"].__setitem__("tip_link", "link_6"),
        "/kinematics/tip_link",
    ),
    ("review_removed", lambda doc: doc.pop("kinematics"), "/kinematics"),
    ("pin_digest", _set_pin("sha256", "0" * 64), "/calibration_pin/sha256"),
    ("pin_removed", lambda doc: doc.__setitem__("calibration_pin", None), "/calibration_pin"),
    (
        "pin_not_a_pin",
        lambda doc: doc.__setitem__("calibration_pin", "cal.json"),
        "/calibration_pin",
    ),
    ("schema", lambda doc: doc.__setitem__("schema", "rosie.compiled-cell.v9"), "/schema"),
    ("cell_id_not_text", lambda doc: doc.__setitem__("cell_id", 7), "/cell_id"),
    ("field_added", lambda doc: doc.__setitem__("note", "x"), "/note"),
]


@pytest.mark.parametrize(
    ("case", "change", "place"), CELL_JSON_EDITS, ids=[c for c, _, _ in CELL_JSON_EDITS]
)
def test_cell_inconsistent_every_field_of_an_unpacked_bundles_cell_json_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, change: Any, place: str
) -> None:
    cell = _unpacked_bundle(tmp_path / "site")
    assert run(tmp_path, capsys, header_of(cell), cell)[0] == 0, case
    line = refused_after_editing(tmp_path, capsys, cell, change)
    assert line.startswith(f"{cell}/cell.json:{place}: cell_inconsistent: "), line
    assert len(line.removeprefix(str(cell))) < 400  # a whole review is cut short


def test_symlink_refused_a_linked_description_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A description/ linked to a copy elsewhere was accepted, unlike a linked meshes/ in it."""
    cell = _unpacked_bundle(tmp_path / "site")
    (cell / "description").rename(tmp_path / "elsewhere")
    (cell / "description").symlink_to(tmp_path / "elsewhere")
    code, lines = run(tmp_path, capsys, header_of(cell), cell)
    assert code == 2
    assert lines == [
        f"{cell}/description: symlink_refused: is a symbolic link: the cell would serve files"
        " from wherever it points; replace the link with the folder itself (unpack the bundle"
        " again)"
    ]


def _description_a_file(cell: Path) -> None:
    shutil.rmtree(cell / "description")
    (cell / "description").write_text("")


@pytest.mark.parametrize(
    ("change", "code", "message"),
    [
        (lambda cell: shutil.rmtree(cell / "description"), "file_missing", "does not exist"),
        (_description_a_file, "not_a_folder", "is a file, not the folder"),
    ],
    ids=["missing", "a_file"],
)
def test_a_description_folder_missing_or_a_file_is_named_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, code: str, message: str
) -> None:
    """Its manifest was named instead: 'file does not exist; create it', or for a file
    'cannot be read (Not a directory); check the file's permissions' (a hostile-input trial)."""
    cell = _unpacked_bundle(tmp_path / "site")
    change(cell)
    code_, lines = run(tmp_path, capsys, header_of(CELL), cell)
    assert code_ == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{cell}/description: {code}: ") and message in lines[0], lines
    assert lines[0].endswith("(unpack the bundle again, or compile the cell again)"), lines


def _reserved(cell: Path, change: Any) -> None:
    """Edit the served calibration, then make cell.json agree with it, as a forger would."""
    served = cell / "machine_planning_calibration.json"
    cal = read_doc(served)
    change(cal)
    data = json.dumps(cal).encode()
    served.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    doc = read_doc(cell / "cell.json")
    doc["calibration_identity"] = doc["robot_cell"]["calibration_identity"] = f"sha256:{digest}"
    doc["calibration_pin"]["sha256"] = digest
    (cell / "cell.json").write_text(json.dumps(doc))


# the calibration rules hold for what a cell serves, not only when it is compiled: each was accepted
SERVED_CALIBRATIONS = [
    (
        "calibration_model_mismatch",
        lambda cal: cal.__setitem__("model_id", "lbr_iiwa_14_r820"),
        "/model_id",
    ),
    (
        "limit_widens",
        lambda cal: cal["limits"]["joints"]["joint_1"].__setitem__("upper_rad", 30.0),
        "/limits/joints/joint_1/upper_rad",
    ),
    (
        "velocity_widens",
        lambda cal: cal["limits"]["joints"]["joint_1"].__setitem__("velocity_rad_s", 99.0),
        "/limits/joints/joint_1/velocity_rad_s",
    ),
    (
        "correction_over_cap",
        lambda cal: cal["kinematics"]["joint_2"].__setitem__("xyz_m", [0.05, 0, 0]),
        "/kinematics/joint_2/xyz_m/0",
    ),
]


@pytest.mark.parametrize(
    ("code", "change", "place"), SERVED_CALIBRATIONS, ids=[c for c, _, _ in SERVED_CALIBRATIONS]
)
def test_a_served_calibration_breaking_a_rule_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], code: str, change: Any, place: str
) -> None:
    cell = _unpacked_bundle(tmp_path / "site")
    _reserved(cell, change)
    result, lines = run(tmp_path, capsys, header_of(cell), cell)
    assert result == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{cell}/machine_planning_calibration.json:{place}: {code}: ")


def test_a_served_calibration_within_the_rules_still_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check reads the served config.json caps: a narrowing within them is accepted."""
    cell = _unpacked_bundle(tmp_path / "site")
    _reserved(cell, lambda cal: cal["limits"]["joints"]["joint_1"].__setitem__("upper_rad", 1.0))
    doc = read_doc(cell / "cell.json")
    # the kinematics review does not depend on limits, so cell.json is consistent again
    assert run(tmp_path, capsys, {"robot_cell": doc["robot_cell"]}, cell)[0] == 0


OFF_ZERO_EDITS = [
    (lambda doc: doc["kinematics"].pop("joint_positions"), "/kinematics/joint_positions"),
    (
        lambda doc: doc["kinematics"].__setitem__("pose", "home: every joint at 0"),
        "/kinematics/pose",
    ),
    (
        lambda doc: doc["kinematics"]["joint_positions"].__setitem__("joint_3", 0.0),
        "/kinematics/joint_positions/joint_3",
    ),
]


def test_a_cell_reviewed_off_zero_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], off_zero: tuple[Path, dict[str, float]]
) -> None:
    """load-check recomputes the review at the served SRDF's home state, as the build did."""
    cell = off_zero[0] / "build/cells/weld_cell_a"
    code, lines = run(tmp_path, capsys, header_of(cell), cell)
    assert code == 0, lines


@pytest.mark.parametrize(
    ("change", "place"), OFF_ZERO_EDITS, ids=["no_positions", "pose_at_zero", "position"]
)
def test_cell_inconsistent_a_review_pose_edited_by_hand(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    off_zero: tuple[Path, dict[str, float]],
    change: Any,
    place: str,
) -> None:
    cell = tmp_path / "weld_cell_a"
    shutil.copytree(off_zero[0] / "build/cells/weld_cell_a", cell)
    line = refused_after_editing(tmp_path, capsys, cell, change)
    assert line.startswith(f"{cell}/cell.json:{place}: cell_inconsistent: "), line


def test_cell_inconsistent_positions_added_to_a_review_at_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = copy_repo(tmp_path / "repo") / "build/cells/weld_cell_a"
    positions = dict.fromkeys([f"joint_{i}" for i in range(1, 7)], 0.0)
    line = refused_after_editing(
        tmp_path,
        capsys,
        cell,
        lambda doc: doc["kinematics"].__setitem__("joint_positions", positions),
    )
    assert line.startswith(f"{cell}/cell.json:/kinematics/joint_positions: cell_inconsistent: ")


def test_a_two_arm_cell_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], two_arms: Path
) -> None:
    """load-check recomputes the review at every tip of the served SRDF's manipulator group."""
    cell = two_arms / "build/cells" / PAIR_CELL
    code, lines = run(tmp_path, capsys, header_of(cell), cell)
    assert code == 0, lines


def _nudge_second_tip(doc: dict[str, Any]) -> None:
    doc["kinematics"]["tips"][1]["calibrated"]["xyz_m"][0] += 0.001


def test_cell_inconsistent_the_second_arms_tip_edited_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], two_arms: Path
) -> None:
    cell = tmp_path / PAIR_CELL
    shutil.copytree(two_arms / "build/cells" / PAIR_CELL, cell)
    line = refused_after_editing(tmp_path, capsys, cell, _nudge_second_tip)
    # the second arm's coordinate, by its indices (was /kinematics/tips, every arm at once)
    place = "/kinematics/tips/1/calibrated/xyz_m/0"
    assert line.startswith(f"{cell}/cell.json:{place}: cell_inconsistent: "), line


# (what the cell serves, its mode, what the refusal says): a bundle unpacked as root keeps its
# entries' modes, and load-check accepted each (a hostile-input trial)
UNSAFE_MODES = [
    ("description/robot.urdf", 0o4755, "has mode 4755 (set-user-ID)"),
    ("description/meshes/link_1.stl", 0o2644, "has mode 2644 (set-group-ID)"),
    ("cell.json", 0o1644, "has mode 1644 (sticky)"),
    ("machine_planning_calibration.json", 0o646, "has mode 0646 (world-writable)"),
    ("description/robot_description_manifest.json", 0o666, "has mode 0666 (world-writable)"),
    ("description/meshes", 0o777, "has mode 0777 (world-writable)"),
    ("", 0o1777, "has mode 1777 (sticky, world-writable)"),
]


@pytest.mark.parametrize(
    ("path", "mode", "why"),
    UNSAFE_MODES,
    ids=[f"{p or 'cell'}_{m:04o}" for p, m, _ in UNSAFE_MODES],
)
def test_unsafe_file_mode_of_a_served_file_or_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, mode: int, why: str
) -> None:
    cell = _unpacked_bundle(tmp_path / "site")
    (cell / path).chmod(mode)
    code, lines = run(tmp_path, capsys, header_of(cell), cell)
    assert code == 2, lines
    [line] = lines
    shown = f"{cell}/{path}" if path else str(cell)
    assert line.startswith(f"{shown}: unsafe_file_mode: {why}"), line
    assert line.endswith("or unpack a bundle `pipeline bundle-identity` accepts again"), line


@pytest.mark.parametrize("mode", [0o664, 0o600, 0o444, 0o755])
def test_a_served_file_of_a_mode_an_umask_or_git_gives_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int
) -> None:
    """umask 002 (a clone of build/ under a user-private group), 077, read-only, executable."""
    cell = _unpacked_bundle(tmp_path / "site")
    (cell / "description/robot.urdf").chmod(mode)
    assert run(tmp_path, capsys, header_of(cell), cell)[0] == 0


def test_a_cell_named_through_a_link_to_it_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--cell /srv/cell-current`, a link to the unpacked cell, as a deployment swaps releases:
    the link's own mode (0777 on Linux) is not the cell's (was unsafe_file_mode, world-writable)."""
    cell = _unpacked_bundle(tmp_path / "site")
    current = tmp_path / "cell-current"
    current.symlink_to(cell, target_is_directory=True)
    code, lines = run(tmp_path, capsys, header_of(cell), current)
    assert code == 0, lines


def test_a_linked_served_file_is_told_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link among the served files is refused as one; its mode (0777) is no second line."""
    cell = _unpacked_bundle(tmp_path / "site")
    urdf = cell / "description/robot.urdf"
    (tmp_path / "robot.urdf").write_bytes(urdf.read_bytes())
    urdf.unlink()
    urdf.symlink_to(tmp_path / "robot.urdf")
    code, lines = run(tmp_path, capsys, header_of(cell), cell)
    assert code == 2, lines
    assert not [line for line in lines if "unsafe_file_mode" in line], lines
