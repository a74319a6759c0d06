"""Whether a container ended on its own while the one under it kept running."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.filter.ended_under import ended_under

HEAD = {"State": {"Running": True, "StartedAt": "2026-12-03T10:45:57.1Z"}}


def vllm(running=False, finished="2026-12-03T10:55:09.5Z"):
    return {"State": {"Running": running, "FinishedAt": finished}}


@pytest.mark.parametrize(
    "case, container, under, ended",
    [
        ("died under a running head", vllm(), HEAD, True),
        ("still runs", vllm(running=True), HEAD, False),
        ("stopped before the head's current start (stop.yml, a Ray restart)", vllm(finished="2026-12-03T10:40:00Z"), HEAD, False),
        ("head not running", vllm(), {"State": {"Running": False, "StartedAt": "2026-12-03T10:45:57Z"}}, False),
        ("created, never ran", vllm(finished="0001-01-01T00:00:00Z"), HEAD, False),
        ("absent", None, HEAD, False),
        ("no head", vllm(), None, False),
    ],
)
def test_ended_under(case, container, under, ended):
    assert ended_under(container, under) is ended, case
