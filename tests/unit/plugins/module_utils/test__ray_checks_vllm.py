"""F20: vLLM's ranks in Ray's actor table, judged with the state of the vLLM server container."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import (
    check_vllm_server,
    culprit_ranks,
    parse_nodes,
    rank_label,
    rank_table,
)

EXPECTED = {"spark-1": "192.168.200.12", "spark-2": "192.168.200.13"}
NODES = parse_nodes(
    [
        {"NodeID": "a" * 56, "Alive": True, "NodeManagerAddress": "192.168.200.12", "NodeManagerHostname": "spark-1",
         "Resources": {"GPU": 1.0, "node:192.168.200.12": 1.0, "node:__internal_head__": 1.0}},
        {"NodeID": "b" * 56, "Alive": True, "NodeManagerAddress": "192.168.200.13", "NodeManagerHostname": "spark-2",
         "Resources": {"GPU": 1.0, "node:192.168.200.13": 1.0}},
    ],
    EXPECTED,
)
KILLED_BY_VLLM = "The actor is dead because it was killed by `ray.kill`."
PROCESS_DIED = "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR"
RUNNING = {"running": True, "died_under_ray": False}
EXITED = {"running": False, "died_under_ray": True, "finished": "2026-12-03T10:55:09", "exit_code": 0}
STOPPED = {"running": False, "died_under_ray": False}


def rank(tp, state="ALIVE", cause="", job_dead=False, address=None, pid=None):
    return {"name": f"vllm_Worker_1796_TP{tp}", "state": state, "cause": cause, "job_dead": job_dead,
            "address": address or ("192.168.200.12" if tp == 0 else "192.168.200.13"), "pid": pid or 100 + tp,
            "driver_ip": "192.168.200.12"}


def judge(server, ranks, expected=2):
    return [(v.check, v.host, v.address) for v in
            check_vllm_server(server, ranks, NODES, expected, head="spark-1", container="vllm-cluster-vllm", timeout=60)]


@pytest.mark.parametrize(
    "case, server, ranks, expected",
    [
        ("healthy", RUNNING, [rank(0), rank(1)], []),
        ("rank on spark-2 killed, server still runs", RUNNING,
         [rank(0), rank(1, "DEAD", PROCESS_DIED)], [("F20", "spark-2", "192.168.200.13")]),
        ("rank on spark-2 killed, vLLM shut the other down and exited", EXITED,
         [rank(0, "DEAD", KILLED_BY_VLLM), rank(1, "DEAD", PROCESS_DIED)], [("F20", "spark-2", "192.168.200.13")]),
        ("server exited, no rank to blame", EXITED,
         [rank(0, "DEAD", KILLED_BY_VLLM, job_dead=True), rank(1, "DEAD", KILLED_BY_VLLM, job_dead=True)],
         [("F20", "spark-1", "")]),
        ("server exited before creating ranks", EXITED, [], [("F20", "spark-1", "")]),
        ("server stopped on purpose: not judged", STOPPED, [rank(0, "DEAD", PROCESS_DIED)], []),
        ("starting: ranks not created yet", RUNNING, [], [("F20", "cluster", "")]),
        ("starting: ranks pending", RUNNING, [rank(0, "PENDING_CREATION"), rank(1, "PENDING_CREATION")],
         [("F20", "cluster", "")]),
        ("restarted moments ago: the predecessor's dead ranks are history", RUNNING,
         [rank(0, "DEAD", KILLED_BY_VLLM, job_dead=True), rank(1, "DEAD", PROCESS_DIED, job_dead=True)],
         [("F20", "cluster", "")]),
        ("one rank short of tensor x pipeline", RUNNING, [rank(0)], [("F20", "cluster", "")]),
        ("rank on an address no inventory host has", RUNNING,
         [rank(0), rank(1, "DEAD", PROCESS_DIED, address="192.168.200.99")],
         [("F20", "the node at 192.168.200.99", "192.168.200.99")]),
    ],
)
def test_vllm_server_verdicts(case, server, ranks, expected):
    assert judge(server, ranks) == expected, case


def test_dead_rank_message_names_host_rank_pid_cause_server_and_fix():
    [violation] = check_vllm_server(EXITED, [rank(0, "DEAD", KILLED_BY_VLLM), rank(1, "DEAD", PROCESS_DIED, pid=173)],
                                    NODES, 2, head="spark-1", container="vllm-cluster-vllm")
    for needle in ("[F20] spark-2", "rank TP1", "192.168.200.13", "pid 173", "its worker process has died",
                   "exited at 2026-12-03T10:55:09 with code 0", "--tags vllm -e vllm_cluster_restart=true",
                   "troubleshooting.md#f20"):
        assert needle in violation.message
    # Ray's sentence is cut at its first full stop: the rest is Ray's advice about OOM killers
    assert "SYSTEM_ERROR" not in violation.message


def test_count_message_lists_every_rank_and_its_state():
    [violation] = check_vllm_server(RUNNING, [rank(0), rank(1, "PENDING_CREATION")], NODES, 2,
                                    head="spark-1", container="vllm-cluster-vllm", timeout=900)
    assert "1 of its 2 ranks alive after 900 s" in violation.message
    assert "TP1 PENDING_CREATION on 192.168.200.13" in violation.message


@pytest.mark.parametrize(
    "causes, culprits",
    [
        ([KILLED_BY_VLLM, PROCESS_DIED], ["TP1"]),
        ([KILLED_BY_VLLM, KILLED_BY_VLLM], []),
        (["The actor is dead because its owner has died.", PROCESS_DIED], ["TP1"]),
        ([PROCESS_DIED, "The actor died because its node has died."], ["TP0", "TP1"]),
    ],
)
def test_the_rank_that_died_first_is_the_one_not_killed_for_anothers_loss(causes, culprits):
    ranks = [rank(i, "DEAD", cause) for i, cause in enumerate(causes)]
    assert [rank_label(r["name"]) for r in culprit_ranks(ranks)] == culprits


@pytest.mark.parametrize(
    "name, label",
    [
        ("vllm_Worker_1796_TP1", "TP1"),
        ("vllm_Worker_1796_TP0_PP1", "TP0 PP1"),
        ("vllm_Worker_1796_PP3", "PP3"),
        ("vllm_Worker_TPx_TP2_PCP1", "TP2 PCP1"),
        ("RayWorkerWrapper", "RayWorkerWrapper"),
    ],
)
def test_rank_label(name, label):
    assert rank_label(name) == label


def test_rank_table_says_where_each_rank_runs():
    assert rank_table([rank(1), rank(0)], NODES) == [
        "TP0      spark-1      192.168.200.12   ALIVE    pid=100",
        "TP1      spark-2      192.168.200.13   ALIVE    pid=101",
    ]
