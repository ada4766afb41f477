"""git's index as a fresh clone's digest shortcut: trusted only where git's own checks would be."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import pipeline.digestread as digestread
import pipeline.digests as digests_module
from pipeline.digests import Digests
from pipeline.gitindex import read_checkout, tracks_file_mode
from tests.conftest import clock_ahead

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")

MESH = b"solid link\n" + bytes(range(256)) * 64


@pytest.fixture(autouse=True)
def no_user_git_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home and config home: the user's own git config cannot turn the shortcut off."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


def git(cwd: Path, *args: str) -> str:
    """Run git quietly in `cwd`; its standard output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def committed(tmp_path: Path, files: dict[str, bytes], *init: str) -> Path:
    """A repository holding `files`, committed, then cloned as CI clones it."""
    origin = tmp_path / "origin"
    for rel, data in files.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).write_bytes(data)
    git(tmp_path, "init", "-q", *init, str(origin))
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "build")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    clone = tmp_path / "clone"
    time.sleep(0.05)  # files written in the index's own clock tick are racily clean
    git(clone, "update-index", "--really-refresh")
    return clone


def cloned(checkout: Path, clone: Path) -> Path:
    """`checkout` committed as it is, then cloned to `clone` as CI clones it."""
    git(checkout, "init", "-q")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-qm", "build")
    git(checkout, "clone", "-q", str(checkout), str(clone))
    time.sleep(0.05)  # files written in the index's own clock tick are racily clean
    git(clone, "update-index", "--really-refresh")
    return clone


def ls_files(repo: Path) -> dict[str, str]:
    """git's own view of the index: path -> blob id."""
    out = {}
    for line in git(repo, "ls-files", "-s").splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[1]
    return out


FILES_KEY = "build/robots/r/meshes/a.stl"
FILES = {
    "build/robots/r/meshes/a.stl": MESH,
    "build/cells/c/description/meshes/a.stl": MESH,
    "build/robots/r/robot.urdf": b"<robot name='r'/>\n",
    "robots/r/meshes/a.stl": MESH,
}


def test_entries_match_git_ls_files(tmp_path: Path) -> None:
    clone = committed(tmp_path, FILES)
    checkout = read_checkout(clone, "build/")
    assert checkout is not None
    expected = {p: blob for p, blob in ls_files(clone).items() if p.startswith("build/")}
    assert {p: blob.hex() for p, (_, blob) in checkout.entries.items()} == expected
    for rel in expected:
        assert checkout.blob(rel, os.stat(clone / rel)) == bytes.fromhex(expected[rel])


def test_sha256_repository(tmp_path: Path) -> None:
    clone = committed(tmp_path, FILES, "--object-format=sha256")
    checkout = read_checkout(clone, "build/")
    assert checkout is not None
    blobs = {p: blob.hex() for p, (_, blob) in checkout.entries.items()}
    assert blobs == {p: b for p, b in ls_files(clone).items() if p.startswith("build/")}
    assert all(len(b) == 64 for b in blobs.values())


def test_a_same_size_edit_with_its_mtime_put_back_is_not_trusted(tmp_path: Path) -> None:
    clone = committed(tmp_path, FILES)
    path = clone / "build/cells/c/description/meshes/a.stl"
    before = os.stat(path)
    path.write_bytes(MESH[:-1] + b"X")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    checkout = read_checkout(clone, "build/")
    assert checkout is not None
    assert checkout.blob("build/cells/c/description/meshes/a.stl", os.stat(path)) is None
    assert checkout.blob(FILES_KEY, os.stat(clone / FILES_KEY)) is not None


def test_a_file_as_new_as_the_index_is_racily_clean(tmp_path: Path) -> None:
    clone = committed(tmp_path, FILES)
    checkout = read_checkout(clone, "build/")
    assert checkout is not None
    info = os.stat(clone / FILES_KEY)
    racy = type(checkout)(checkout.entries, info.st_mtime_ns)
    assert racy.blob(FILES_KEY, info) is None


@pytest.mark.parametrize(
    "flag", ["--assume-unchanged", "--skip-worktree"], ids=["assume_valid", "skip_worktree"]
)
def test_flagged_entries_are_not_trusted(tmp_path: Path, flag: str) -> None:
    clone = committed(tmp_path, FILES)
    git(clone, "update-index", flag, FILES_KEY)
    checkout = read_checkout(clone, "build/")
    assert checkout is not None
    assert FILES_KEY not in checkout.entries
    assert "build/robots/r/robot.urdf" in checkout.entries  # version 3 entries still parse


@pytest.mark.parametrize(
    "args", [["--index-version", "4"], ["--split-index"]], ids=["version_4", "split_index"]
)
def test_index_layouts_not_read_give_no_shortcut(tmp_path: Path, args: list[str]) -> None:
    clone = committed(tmp_path, FILES)
    git(clone, "update-index", *args)
    assert read_checkout(clone, "build/") is None


def test_torn_or_foreign_index_gives_no_shortcut(tmp_path: Path) -> None:
    clone = committed(tmp_path, FILES)
    index = clone / ".git" / "index"
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])
    assert read_checkout(clone, "build/") is None
    index.write_bytes(b"junk" + data[4:])
    assert read_checkout(clone, "build/") is None
    index.unlink()
    os.mkfifo(index)  # never waited on
    assert read_checkout(clone, "build/") is None


def test_a_git_file_of_junk_gives_no_shortcut(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / ".git").write_bytes(b"\xff\xfe not a pointer")
    assert read_checkout(tmp_path, "build/") is None
    (tmp_path / ".git").write_bytes(b"gitdir: nowhere")
    assert read_checkout(tmp_path, "build/") is None


def test_no_repository_or_git_pointed_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "plain" / "build").mkdir(parents=True)
    assert read_checkout(tmp_path / "plain", "build/") is None
    clone = committed(tmp_path, FILES)
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "elsewhere"))
    assert read_checkout(clone, "build/") is None


def test_project_in_a_subfolder_and_in_a_linked_worktree(tmp_path: Path) -> None:
    nested = {f"compiler/{rel}": data for rel, data in FILES.items()}
    clone = committed(tmp_path, nested)
    checkout = read_checkout(clone / "compiler", "build/")
    assert checkout is not None
    assert FILES_KEY in checkout.entries
    git(clone, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = read_checkout(tmp_path / "linked" / "compiler", "build/")
    assert linked is not None
    assert set(linked.entries) == set(checkout.entries)


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the files the digests read whole from now on."""
    reads: list[int] = []
    real = digestread.read_fd

    def counted(fd: int, n: int, limit: int) -> bytes | None:
        reads.append(n)
        return real(fd, n, limit)

    monkeypatch.setattr(digestread, "read_fd", counted)
    return reads


def test_a_fresh_clone_reads_each_blob_of_build_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy in the cell is not read: git says it holds the blob the description's copy holds."""
    clone = committed(tmp_path, FILES)
    reads = counted_reads(monkeypatch)
    os.utime(clone / "robots/r/meshes/a.stl", (1e9, 1e9))  # not as git's index recorded it
    clock_ahead(monkeypatch, 60, digests_module, digestread)  # and old enough to remember
    known = Digests(clone, keep_bytes=1 << 20)
    digest = hashlib.sha256(MESH).hexdigest()
    assert known.of("robots/r/meshes/a.stl") == digest  # inputs are hashed first, as in a check
    assert known.entries  # and remembered: the cache is no longer empty
    reads.clear()
    assert known.holds("build/robots/r/meshes/a.stl", digest)
    assert known.holds("build/cells/c/description/meshes/a.stl", digest)
    assert reads == [len(MESH)]
    # learnt like a read file (here old enough to be remembered across runs)
    assert known.entries["build/cells/c/description/meshes/a.stl"][1] == digest


def test_a_fresh_clone_still_sees_an_edited_copy(tmp_path: Path) -> None:
    clone = committed(tmp_path, FILES)
    path = clone / "build/cells/c/description/meshes/a.stl"
    before = os.stat(path)
    path.write_bytes(MESH[:-1] + b"X")  # same size, one byte off, mtime put back
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    known = Digests(clone)
    digest = hashlib.sha256(MESH).hexdigest()
    assert known.holds("build/robots/r/meshes/a.stl", digest)
    assert not known.holds("build/cells/c/description/meshes/a.stl", digest)


SOURCES = {"robots/a/meshes/a.stl": MESH, "robots/b/meshes/a.stl": MESH}
EDITED = MESH[:-1] + b"X"  # same size, one byte off


@pytest.mark.parametrize(
    ("edit", "reads", "b_holds"),
    [
        (None, 1, MESH),  # robot b copied from robot a: its blob was read already
        ("same size, mtime put back", 2, EDITED),  # its stat no longer matches git's: read
    ],
    ids=["copy", "edited"],
)
def test_a_fresh_clone_reads_each_blob_of_its_sources_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str | None, reads: int, b_holds: bytes
) -> None:
    """Sources are looked up in git's index too: a copy of a source already read is not read,
    and an edited one still is."""
    clone = committed(tmp_path, SOURCES)
    if edit:
        path = clone / "robots/b/meshes/a.stl"
        before = os.stat(path)
        path.write_bytes(EDITED)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    sizes = counted_reads(monkeypatch)
    known = Digests(clone, keep_bytes=1 << 20, settled=True)
    assert known.of("robots/a/meshes/a.stl") == hashlib.sha256(MESH).hexdigest()
    assert known.of("robots/b/meshes/a.stl") == hashlib.sha256(b_holds).hexdigest()
    assert len(sizes) == reads


def test_with_a_digest_cache_git_is_not_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = committed(tmp_path, FILES)
    first = Digests(clone)
    first.of("robots/r/meshes/a.stl")
    clock_ahead(monkeypatch, 60, digests_module, digestread)  # old enough to be remembered
    first = Digests(clone)
    first.of("robots/r/meshes/a.stl")
    first.save()
    asked: list[Path] = []
    monkeypatch.setattr(digestread, "read_checkout", lambda root, under: asked.append(root))
    known = Digests(clone)
    assert known.holds(FILES_KEY, hashlib.sha256(MESH).hexdigest())
    assert asked == []


LINK_3_SOURCE = "robots/lbr_iiwa_14_r820/meshes/link_3.stl"


@pytest.mark.parametrize(
    ("edited", "first", "lines"),
    [
        (
            "build/cells/iiwa_bench/description/meshes/link_3.stl",
            "modified: build/cells/iiwa_bench/description/meshes/link_3.stl (differs from what "
            "cellbuild:iiwa_bench made)",
            1,
        ),
        (
            LINK_3_SOURCE,
            f"stale: build/robots/lbr_iiwa_14_r820/meshes/link_3.stl (urdf:lbr_iiwa_14_r820: "
            f"{LINK_3_SOURCE} changed)",
            # the mesh's copies, the SRDF (its step collides the group states), the spheres,
            # the manifest, the index and the served cell (with its SRDF)
            11,
        ),
    ],
    ids=["copy in build", "source"],
)
def test_check_of_a_fresh_clone_finds_an_edited_file(
    project: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    edited: str,
    first: str,
    lines: int,
) -> None:
    """CI's case: `pipeline check` on a clone says current, and still sees a one-byte edit."""
    from pipeline.cli import main

    clone = cloned(project, tmp_path_factory.mktemp("ci") / "clone")
    monkeypatch.chdir(clone)
    assert main(["check"]) == 0
    (clone / ".pipeline-digests").unlink(missing_ok=True)
    (clone / ".pipeline-digests-build").unlink(missing_ok=True)
    copy = clone / edited
    data = bytearray(copy.read_bytes())
    data[100] ^= 1
    before = os.stat(copy)
    copy.write_bytes(bytes(data))
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    capsys.readouterr()
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == first
    assert out.count("\n") == lines


def test_a_file_changed_while_read_teaches_no_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What was read stands for the blob only if the file's stat did not move meanwhile."""
    clone = committed(tmp_path, FILES)
    real = Digests._read

    def read_then_rewrite(
        self: Digests, rel: str, path: str, expected: str = "", plain: bool = False
    ) -> str | None:
        found = real(self, rel, path, expected, plain)
        Path(path).write_bytes(Path(path).read_bytes())  # same bytes, new ctime
        return found

    monkeypatch.setattr(Digests, "_read", read_then_rewrite)
    known = Digests(clone)
    assert known.holds(FILES_KEY, hashlib.sha256(MESH).hexdigest())
    assert known.blobs == {}


URDF = "build/robots/r/robot.urdf"
URDF_COPY = "build/cells/c/description/robot.urdf"
COPIES = {URDF: b"<robot name='r'/>\n", URDF_COPY: b"<robot name='r'/>\n"}


def test_one_blob_checked_out_as_other_bytes_of_its_size_is_read(
    tmp_path: Path, no_user_git_config: Path
) -> None:
    """A committed .gitattributes re-encodes one copy (EBCDIC keeps an ASCII file's size)."""
    clone = committed(tmp_path, COPIES)
    origin = tmp_path / "origin"
    (origin / ".gitattributes").write_text(f"/{URDF_COPY} working-tree-encoding=IBM037\n")
    git(origin, "add", ".gitattributes")
    git(origin, "commit", "-qm", "attributes")
    git(clone, "pull", "-q")
    # removed first, so that git must write it again, converted (a file whose stat git's index
    # still matches is not rewritten, which made this setup depend on the clock)
    (clone / URDF_COPY).unlink()
    git(clone, "checkout", "-q", "HEAD", "--", URDF_COPY)
    time.sleep(0.05)
    git(clone, "update-index", "--really-refresh")
    assert ls_files(clone)[URDF] == ls_files(clone)[URDF_COPY]
    assert (clone / URDF_COPY).read_bytes() != COPIES[URDF_COPY]
    assert (clone / URDF_COPY).stat().st_size == len(COPIES[URDF_COPY])
    known = Digests(clone)
    digest = hashlib.sha256(COPIES[URDF]).hexdigest()
    assert known.holds(URDF, digest)
    assert not known.holds(URDF_COPY, digest)


def test_two_files_cleaned_into_one_blob_are_read(tmp_path: Path, no_user_git_config: Path) -> None:
    """With autocrlf, `git add` records a file's stat when its CRLF-to-LF form is the blob."""
    clone = committed(tmp_path, {"build/a.txt": b"a\nb\n", "build/b.txt": b"a\nb\n"})
    git(clone, "config", "core.autocrlf", "input")
    (clone / "build/a.txt").write_bytes(b"a\r\nb\n")
    (clone / "build/b.txt").write_bytes(b"a\nb\r\n")  # same size, other bytes, same blob
    git(clone, "add", "build")
    time.sleep(0.05)
    git(clone, "update-index", "--really-refresh")
    assert ls_files(clone)["build/a.txt"] == ls_files(clone)["build/b.txt"]
    known = Digests(clone)
    digest = hashlib.sha256(b"a\r\nb\n").hexdigest()
    assert known.holds("build/a.txt", digest)
    assert not known.holds("build/b.txt", digest)


CONVERSION_SOURCES = [
    pytest.param(".gitattributes", b"*.stl -text\n", id="gitattributes_at_top"),
    pytest.param("robots/.gitattributes", b"* ident\n", id="gitattributes_elsewhere"),
    pytest.param(".gitattributes", b"* -text\n*.urdf eol=crlf\n", id="gitattributes_off_then_on"),
    pytest.param("robots/.gitattributes", b"* -text\n", id="gitattributes_off_not_at_top"),
    pytest.param(".git/info/attributes", b"* eol=crlf\n", id="info_attributes"),
    pytest.param("~/.config/git/attributes", b"* ident\n", id="global_attributes"),
    pytest.param(".git/config", b"[core]\n\tautoCRLF = input\n", id="repo_autocrlf"),
    pytest.param("~/.gitconfig", b"[core]\n autocrlf = true\n", id="user_autocrlf"),
    pytest.param("~/.gitconfig", b"[core]\n attributesFile = ~/a\n", id="user_attributes_file"),
    pytest.param("~/.config/git/config", b"[include]\n path = ~/x\n", id="user_include"),
]


@pytest.mark.parametrize(("where", "text"), CONVERSION_SOURCES)
def test_anything_that_may_convert_files_gives_no_shortcut(
    tmp_path: Path, no_user_git_config: Path, where: str, text: bytes
) -> None:
    clone = committed(tmp_path, FILES)
    assert read_checkout(clone, "build/") is not None
    path = no_user_git_config / where[2:] if where.startswith("~/") else clone / where
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as out:
        out.write(text)
    if where.endswith(".gitattributes"):
        git(clone, "add", where)  # the index holds it: git reads it on every checkout
    assert read_checkout(clone, "build/") is None


SHIPPED_ATTRIBUTES = (Path(__file__).parent.parent / ".gitattributes").read_bytes()


def test_the_shipped_gitattributes_keeps_the_shortcut(
    tmp_path: Path, no_user_git_config: Path
) -> None:
    """`* -text` turns every conversion off, so git's index still says what a file holds."""
    clone = committed(tmp_path, {**FILES, ".gitattributes": SHIPPED_ATTRIBUTES})
    found = read_checkout(clone, "build/")
    assert found is not None
    expected = {path: oid for path, oid in ls_files(clone).items() if path.startswith("build/")}
    assert {path: oid.hex() for path, (_, oid) in found.entries.items()} == expected


def test_the_shipped_gitattributes_checks_out_exact_bytes_under_autocrlf(
    tmp_path: Path, no_user_git_config: Path
) -> None:
    """Git for Windows sets core.autocrlf=true; pins and identities hash the committed bytes."""
    text = b'{\n  "cell_id": "c"\n}\n'
    origin = committed(
        tmp_path, {"cells/c/machine.json": text, ".gitattributes": SHIPPED_ATTRIBUTES}
    )
    windows = tmp_path / "windows"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(origin), str(windows))
    assert (windows / "cells/c/machine.json").read_bytes() == text
    plain = tmp_path / "plain"
    shutil.copytree(origin, plain)
    (plain / ".gitattributes").unlink()
    git(plain, "rm", "-q", "--cached", ".gitattributes")
    git(plain, "commit", "-qm", "no attributes")
    converted = tmp_path / "converted"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(plain), str(converted))
    assert (converted / "cells/c/machine.json").read_bytes() == text.replace(b"\n", b"\r\n")


def test_git_config_given_by_environment_gives_no_shortcut(
    tmp_path: Path, no_user_git_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = committed(tmp_path, FILES)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.autocrlf'='true'")
    assert read_checkout(clone, "build/") is None


@pytest.mark.parametrize(
    ("setting", "tracked"),
    [
        (None, True),  # outside git: a build never sets an execute bit
        ("true", True),
        ("false", False),
        ("no", False),
    ],
)
def test_an_execute_bit_counts_only_where_git_records_it(
    tmp_path: Path, setting: str | None, tracked: bool
) -> None:
    """core.fileMode false (git's choice on a file system without modes, as a Windows drive
    under WSL): every file looks executable there, and none of that is a change git sees."""
    root = tmp_path / "repo"
    (root / "build").mkdir(parents=True)
    if setting is not None:
        git(root, "init", "-q")
        git(root, "config", "core.fileMode", setting)
    assert tracks_file_mode(root) is tracked
    out = root / "build" / "index.json"
    out.write_bytes(b"{}\n")
    out.chmod(0o755)
    digest = hashlib.sha256(b"{}\n").hexdigest()
    assert Digests(root, remember=False).holds("build/index.json", digest) is not tracked
