"""Whether a worker started before the head, across two hosts' clocks."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.filter.started_before import started_before
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._containers import docker_time


def started(stamp):
    return {"State": {"StartedAt": stamp}}


HEAD = started("2026-12-03T10:45:57.123456789Z")


@pytest.mark.parametrize(
    "case, worker, offset, older",
    [
        ("left from an earlier head", started("2026-12-03T10:30:00Z"), 0, True),
        ("joined after the head started", started("2026-12-03T10:46:10Z"), 0, False),
        ("the worker's clock runs 2 min behind: it joined the current head", started("2026-12-03T10:44:10Z"), 120, False),
        ("the worker's clock runs 2 min ahead, left from an earlier head", started("2026-12-03T10:47:00Z"), -120, True),
        ("within the margin", started("2026-12-03T10:45:55Z"), 0, False),
        ("an offset in the stamp itself", started("2026-12-03T11:30:00+01:00"), 0, True),
        ("never started", started("0001-01-01T00:00:00Z"), 0, False),
        ("absent", None, 0, False),
    ],
)
def test_started_before(case, worker, offset, older):
    assert started_before(worker, HEAD, offset) is older, case


def test_docker_time_keeps_the_fraction():
    assert docker_time("1970-01-01T00:00:01.5Z") == 1.5
    assert docker_time("garbage") is None


def test_node_states_description_of_the_containers_reads_the_same():
    def described(stamp):
        return {"exists": True, "running": True, "started_at": stamp}

    assert started_before(described("2026-12-03T10:30:00Z"), described(HEAD["State"]["StartedAt"]), 0) is True
    assert started_before(described("2026-12-03T10:46:10Z"), HEAD, 0) is False
    assert started_before({"exists": False, "running": False}, HEAD, 0) is False
