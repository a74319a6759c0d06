"""F18: the free unified memory a node has against what vLLM will ask for, from /proc/meminfo."""

from __future__ import annotations

import base64

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._memory import (
    free_memory_problem,
    free_memory_problems,
    meminfo,
)

GIB_KB = 1024 * 1024


def proc_meminfo(total_gib, free_gib, cached_gib=0.0):
    return (f"MemTotal:       {int(total_gib * GIB_KB)} kB\nMemFree:        {int(free_gib * GIB_KB)} kB\n"
            f"MemAvailable:   {int((free_gib + cached_gib) * GIB_KB)} kB\nCached:         {int(cached_gib * GIB_KB)} kB\n"
            "HugePages_Total:       0\n")


def test_meminfo_reads_bytes():
    fields = meminfo(proc_meminfo(119.7, 61.05))
    assert fields["MemTotal"] == int(119.7 * GIB_KB) * 1024
    assert fields["HugePages_Total"] == 0


@pytest.mark.parametrize(
    "case, text, utilization, expected",
    [
        ("the issue's head: 61.05 of 119.7 GiB free, 0.85 asked", proc_meminfo(119.7, 61.05, 40.0), 0.85,
         "[F18] spark-1: 61.0 of 119.7 GiB free, but vllm_server_gpu_memory_utilization=0.85 asks for 101.7 GiB"),
        ("page cache is not free", proc_meminfo(119.7, 61.05, 55.0), 0.7, "Page cache holds 55.0 GiB"),
        ("the largest ratio that fits is named", proc_meminfo(119.7, 61.05), 0.85, "(at most 0.50 fits now)"),
        ("enough", proc_meminfo(119.7, 100.0), 0.7, ""),
        ("exactly enough", proc_meminfo(100.0, 70.0), 0.7, ""),
        ("no meminfo", "", 0.7, "[F18] spark-1: /proc/meminfo gave no MemTotal"),
    ],
)
def test_free_memory_problem(case, text, utilization, expected):
    problem = free_memory_problem(text, utilization, "spark-1")
    if not expected:
        assert problem == "", case
    else:
        assert expected in problem, (case, problem)


def test_free_memory_problems_names_each_node_short_of_memory():
    def read(host, free):
        return {"item": host, "content": base64.b64encode(proc_meminfo(119.7, free).encode()).decode()}

    problems = free_memory_problems([read("spark-1", 61.05), read("spark-2", 110.0)], 0.85)
    assert len(problems) == 1 and problems[0].startswith("[F18] spark-1: 61.0 of 119.7 GiB free")
