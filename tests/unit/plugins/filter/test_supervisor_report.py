"""The filter validate and diagnose judge the supervisor's record with (F28): Docker's start time read, a run that
starts vLLM again forgiving a record of giving up."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.filter.supervisor_report import _epoch, supervisor_report

GAVE_UP = {"version": 1, "phase": "gave_up", "gave_up": {"at": 1_796_500_000, "reason": "x", "restarts": 3},
           "last_check": {"at": 1_796_500_000, "ok": False}, "written": 1_796_500_000}
SETTINGS = {"interval": 30, "deadline": 20, "window": 3600}


@pytest.mark.parametrize("text, seconds", [
    ("2026-12-06T01:29:12.540153422Z", 1_796_520_552),
    ("2026-12-06T01:29:12Z", 1_796_520_552),
    ("0001-01-01T00:00:00Z", None),
    ("", None),
    ("yesterday", None),
])
def test_dockers_start_time_in_seconds(text, seconds):
    assert _epoch(text) == seconds


@pytest.mark.parametrize("starts_group, started_at, problem", [
    (False, "", True),
    (False, "2026-12-05T19:00:00Z", True),  # started before it gave up
    (False, "2026-12-05T21:00:00Z", False),  # started again since
    (True, "", False),  # this run starts vLLM
])
def test_giving_up_is_a_problem_until_vllm_starts_again(starts_group, started_at, problem):
    found = supervisor_report(GAVE_UP, "spark-1", SETTINGS, 1_796_500_010, "/x", "c", starts_group, started_at)
    assert bool(found["problem"]) == problem
    if problem:
        assert found["problem"].startswith("[F28] spark-1: the supervisor gave up at 2026-12-05 ")
        assert found["problem"].endswith("docs/troubleshooting.md#f28")
