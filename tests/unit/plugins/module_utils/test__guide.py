"""Where the troubleshooting guide lives, and how a message cites its sections (filter with_guide)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING, with_guide


@pytest.mark.parametrize(
    "case, problems, expected",
    [
        ("nothing", [], ""),
        ("one failure mode", ["[F18] spark-1: low.", "[F18] spark-2: low."],
         f"[F18] spark-1: low. [F18] spark-2: low. See {TROUBLESHOOTING}#f18"),
        ("two, in the order they first appear", ["[F23] a.", "[F7] b.", "[F23] c."],
         f"[F23] a. [F7] b. [F23] c. See {TROUBLESHOOTING}#f23 See {TROUBLESHOOTING}#f7"),
        ("a section already cited is not cited again", [f"[F19] a. See {TROUBLESHOOTING}#f19", "[F20] b."],
         f"[F19] a. See {TROUBLESHOOTING}#f19 [F20] b. See {TROUBLESHOOTING}#f20"),
        ("f1 cited does not count for f10", [f"[F1] a. See {TROUBLESHOOTING}#f1", "[F10] b."],
         f"[F1] a. See {TROUBLESHOOTING}#f1 [F10] b. See {TROUBLESHOOTING}#f10"),
        ("f10 cited does not count for f1", [f"[F10] a. See {TROUBLESHOOTING}#f10", "[F1] b."],
         f"[F10] a. See {TROUBLESHOOTING}#f10 [F1] b. See {TROUBLESHOOTING}#f1"),
        ("no failure mode named: nothing cited", ["spark-1: the port is taken."], "spark-1: the port is taken."),
        ("empty problems dropped", ["", "[F6] x."], f"[F6] x. See {TROUBLESHOOTING}#f6"),
    ],
)
def test_with_guide(case, problems, expected):
    assert with_guide(problems) == expected, case
