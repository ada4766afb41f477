"""Group expansion and subgroup cycles (pipeline/srdf/groups.py) on nesting of any depth."""

from __future__ import annotations

import pytest

from pipeline.srdf.groups import expand, subgroup_cycles
from pipeline.srdf.model import Group, LinkMember, Srdf, SubgroupMember
from pipeline.urdf import load_robot
from tests.conftest import REPO

ABB = load_robot(REPO / "robots" / "abb_irb2400", REPO)


def group(name: str, link: str, *subgroups: str) -> Group:
    members = (LinkMember(link, ""), *(SubgroupMember(s, "") for s in subgroups))
    return Group(name, members, "")


def nested(depth: int) -> Srdf:
    """g0 includes g1 includes ... g<depth>: deeper than Python's recursion limit."""
    groups = [group(f"g{i}", "link_1", f"g{i + 1}") for i in range(depth)]
    return Srdf("abb_irb2400", None, (*groups, group(f"g{depth}", "link_6")))


def lattice(levels: int) -> Srdf:
    """g<i> and h<i> each include both g<i+1> and h<i+1>: 2**levels paths, no cycle."""
    groups = []
    for i in range(levels):
        for name in (f"g{i}", f"h{i}"):
            groups.append(group(name, "link_1", f"g{i + 1}", f"h{i + 1}"))
    groups += [group(f"g{levels}", "link_6"), group(f"h{levels}", "link_5")]
    return Srdf("abb_irb2400", None, tuple(groups))


@pytest.mark.parametrize(
    ("case", "srdf"), [("nested_3000", nested(3000)), ("lattice_80", lattice(80))]
)
def test_subgroup_cycle_none_in_deep_or_wide_nesting(case: str, srdf: Srdf) -> None:
    """No RecursionError at depth 3000, no walk of 2**80 paths; the deepest links reach g0."""
    assert subgroup_cycles(srdf) == []
    contents = expand(srdf, ABB)
    assert {"link_1", "link_6"} <= contents["g0"].links
    assert {"joint_1", "joint_6"} <= contents["g0"].joints


@pytest.mark.parametrize(
    ("case", "edges", "cycles"),
    [
        ("self", {"a": ["a"]}, [["a"]]),
        ("pair", {"a": ["b"], "b": ["a"]}, [["a", "b"]]),
        ("behind_a_chain", {"a": ["b"], "b": ["c"], "c": ["b"]}, [["b", "c"]]),
        (
            "two_disjoint",
            {"a": ["b"], "b": ["a"], "c": ["d"], "d": ["c"]},
            [["a", "b"], ["c", "d"]],
        ),
        ("unknown_subgroup", {"a": ["nope"]}, []),
    ],
)
def test_subgroup_cycle_reported_once_per_cycle(
    case: str, edges: dict[str, list[str]], cycles: list[list[str]]
) -> None:
    srdf = Srdf("abb_irb2400", None, tuple(group(n, "link_1", *s) for n, s in edges.items()))
    assert subgroup_cycles(srdf) == cycles
    contents = expand(srdf, ABB)  # a cycle does not loop: each group still expands
    assert set(contents) == set(edges)
