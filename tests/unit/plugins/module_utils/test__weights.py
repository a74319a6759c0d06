"""Weights staged once (F17): the cache layout, what a node must receive, space, revision, verification."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import snapshot_path
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import (
    final_problems,
    human,
    is_hub_id,
    moves,
    report,
    repo_folder,
    revision_problems,
    space_problem,
    transfer_plan,
    verify_problem,
)


@pytest.mark.parametrize(
    "model, hub",
    [
        ("Qwen/Qwen3.5-122B-A10B-FP8", True),
        ("inferops-lab/tiny-llama", True),
        ("/models/tiny-llama", False),
        ("./tiny-llama", False),
        ("tiny-llama", False),
        ("org/name/extra", False),
        ("org/../etc", False),
        ("", False),
    ],
)
def test_is_hub_id(model, hub):
    assert is_hub_id(model) is hub


def test_the_hub_cache_layout_vllm_reads_under_hf_home():
    assert repo_folder("Qwen/Qwen3.5-122B-A10B-FP8") == "models--Qwen--Qwen3.5-122B-A10B-FP8"
    assert snapshot_path("/var/lib/inferops-vllm-cluster/huggingface/", "inferops-lab/tiny-llama", "abc123") == (
        "/var/lib/inferops-vllm-cluster/huggingface/hub/models--inferops-lab--tiny-llama/snapshots/abc123")


HEAD = {
    "config.json": {"size": 700, "sha256": "c1"},
    "model-00001-of-00002.safetensors": {"size": 5_000_000_000, "sha256": "a1"},
    "model-00002-of-00002.safetensors": {"size": 3_000_000_000, "sha256": "a2"},
}


@pytest.mark.parametrize(
    "case, target, copy, extra",
    [
        ("a node with nothing", {}, sorted(HEAD), []),
        ("a node holding it all: nothing to copy", dict(HEAD), [], []),
        ("one shard truncated", {**HEAD, "model-00002-of-00002.safetensors": {"size": 1_000, "sha256": "zz"}},
         ["model-00002-of-00002.safetensors"], []),
        ("one shard corrupted, same size",
         {**HEAD, "model-00001-of-00002.safetensors": {"size": 5_000_000_000, "sha256": "bad"}},
         ["model-00001-of-00002.safetensors"], []),
        ("a file the head does not have", {**HEAD, "stale.bin": {"size": 1, "sha256": "x"}}, [], ["stale.bin"]),
    ],
)
def test_transfer_plan(case, target, copy, extra):
    plan = transfer_plan(HEAD, target)
    assert plan["to_copy"] == copy, case
    assert plan["extra"] == extra, case
    assert plan["bytes"] == sum(HEAD[path]["size"] for path in copy), case
    assert plan["total"] == 8_000_000_700
    assert plan["same"] == len(HEAD) - len(copy)


@pytest.mark.parametrize(
    "needed, free, expected",
    [
        (8_000_000_700, 500_000_000_000, ""),
        (0, 0, ""),
        (8_000_000_700, 3_000_000_000, "[F17] spark-2: 8.0 GB to copy into /var/lib/hf, but its filesystem has 3.0 GB "
                                       "free"),
    ],
)
def test_space_problem(needed, free, expected):
    problem = space_problem("spark-2", needed, free, "/var/lib/hf")
    assert problem.startswith(expected) if expected else problem == ""


def test_human():
    assert [human(n) for n in (0, 999, 1_000, 125_300_000_000, 2_000_000_000_000)] == [
        "0 B", "999 B", "1.0 kB", "125.3 GB", "2.0 TB"]


def test_revision_problems_name_the_node_with_an_older_snapshot():
    problems = revision_problems("Qwen/Q", "spark-1", "new", {"spark-1": "new", "spark-2": "old", "spark-3": ""})
    assert problems[0].startswith("[F17] spark-2: holds revision old of Qwen/Q, the head spark-1 holds new")
    assert problems[1].startswith("[F17] spark-3: holds revision none of Qwen/Q")
    assert revision_problems("Qwen/Q", "spark-1", "new", {"spark-1": "new", "spark-2": "new"}) == []


def test_verify_problem():
    assert verify_problem("spark-2", "m", []) == ""
    problem = verify_problem("spark-2", "m", [f"f{i}" for i in range(7)])
    assert problem.startswith("[F17] spark-2: after the copy 7 file(s) of m still differ from the head's "
                              "(f0, f1, f2, f3, f4, ...)")


SNAPSHOT = {"model": "org/tiny", "commit": "c1899de289a04d12100db370d81485cdf75e47ca",
            "files": {"a": {}, "b": {}, "c": {}}}


@pytest.mark.parametrize(
    "fetch, url, expected",
    [
        ({"to_copy": [], "total": 2_400_000, "found": SNAPSHOT["commit"]}, "",
         "spark-2: holds all 3 files of org/tiny c1899de289a0 (2.4 MB): nothing to copy"),
        ({"to_copy": [], "total": 2_400_000, "found": ""}, "",
         "spark-2: holds all 3 files of org/tiny c1899de289a0 (2.4 MB): nothing to copy; its ref names no revision, "
         "staging points it at c1899de289a0"),
        ({"to_copy": ["b"], "bytes": 2_000_000, "free": 9_000_000_000, "found": "0" * 40}, "",
         "spark-2: lacks 1 of 3 files of org/tiny c1899de289a0 (2.0 MB to copy, 9.0 GB free); its ref names "
         "000000000000, staging points it at c1899de289a0"),
        ({"copied": ["b"], "transferred": 2_000_000, "seconds": 0.5, "same": 2}, "http://198.18.1.12:29510",
         "spark-2: copied 1 of 3 files of org/tiny c1899de289a0 (2.0 MB in 0.5 s, 4.0 MB/s) from "
         "http://198.18.1.12:29510, each verified by sha256; 2 already matched"),
        ({"copied": [], "transferred": 0, "seconds": 0, "same": 3}, "http://198.18.1.12:29510",
         "spark-2: copied 0 of 3 files of org/tiny c1899de289a0 (0 B in 0.0 s) from http://198.18.1.12:29510, "
         "each verified by sha256; 3 already matched"),
    ],
)
def test_report(fetch, url, expected):
    assert report(fetch, "spark-2", SNAPSHOT, url) == expected


@pytest.mark.parametrize(
    "fetch, expected",
    [
        ({"to_copy": [], "found": SNAPSHOT["commit"]}, []),
        ({"to_copy": [], "found": "0" * 40}, ["[F17] spark-2: holds revision 0000000000000000000000000000000000000000 "
                                              "of org/tiny, the head spark-1 holds c1899de"]),
        ({"to_copy": ["b"], "found": SNAPSHOT["commit"]}, ["[F17] spark-2: after the copy 1 file(s) of org/tiny still "
                                                           "differ from the head's (b)"]),
    ],
)
def test_final_problems(fetch, expected):
    problems = final_problems(fetch, "spark-2", SNAPSHOT, "spark-1")
    assert len(problems) == len(expected) and all(p.startswith(e) for p, e in zip(problems, expected))


@pytest.mark.parametrize(
    "case, fetches, expected",
    [
        ("no worker", {}, {"copiers": [], "copying": False, "changing": False}),
        ("every worker holds the head's copy", {"spark-2": {"to_copy": [], "needed": False}},
         {"copiers": [], "copying": False, "changing": False}),
        ("one lacks files", {"spark-2": {"to_copy": ["model.safetensors"], "needed": True},
                             "spark-3": {"to_copy": [], "needed": False}},
         {"copiers": ["spark-2"], "copying": True, "changing": True}),
        ("only a ref moved: a change, no copy", {"spark-2": {"to_copy": [], "needed": True}},
         {"copiers": [], "copying": False, "changing": True}),
        ("a worker without a plan", {"spark-2": None}, {"copiers": [], "copying": False, "changing": False}),
    ],
)
def test_moves(case, fetches, expected):
    assert moves(fetches) == expected, case
