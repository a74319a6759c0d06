"""The Ray-free backend's decisions: ranks, the launcher's arguments, what vLLM's launcher refuses (F9), F19."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import (
    listen_problem,
    launcher_args,
    master_problems,
    node_ranks,
    rank_problems,
    split_problems,
    unreachable_master,
)


@pytest.mark.parametrize(
    "head, workers, expected",
    [
        ("spark-1", ["spark-2"], {"spark-1": 0, "spark-2": 1}),
        ("spark-1", ["spark-3", "spark-2"], {"spark-1": 0, "spark-3": 1, "spark-2": 2}),
        ("spark-1", [], {"spark-1": 0}),
        # a head also listed as a worker keeps rank 0 (vllm_cluster refuses that inventory anyway)
        ("spark-1", ["spark-1", "spark-2"], {"spark-1": 0, "spark-2": 1}),
    ],
)
def test_node_ranks(head, workers, expected):
    assert node_ranks(head, workers) == expected


@pytest.mark.parametrize(
    "tp, pp, nodes, per_node, expected",
    [
        (2, 1, 2, 1, ""),  # the two Sparks
        (4, 1, 2, 2, ""),
        (2, 2, 4, 1, ""),
        (3, 1, 2, 2, "[F9] cluster: vllm_server_tensor_parallel_size 3 x vllm_server_pipeline_parallel_size 1 = 3 "
                     "ranks cannot be split evenly between the inventory's 2 nodes"),
        (4, 1, 2, 1, "[F9] cluster: 4 ranks over 2 nodes put 2 ranks on each node, but each has 1 GPUs"),
    ],
)
def test_split_problems(tp, pp, nodes, per_node, expected):
    problems = split_problems(tp, pp, nodes, per_node)
    assert (problems == []) if not expected else (len(problems) == 1 and problems[0].startswith(expected))


def test_rank_zero_serves_and_the_others_run_headless():
    assert launcher_args(0, 2, "192.168.200.12", 29511) == [
        "--nnodes", "2", "--node-rank", "0", "--master-addr", "192.168.200.12", "--master-port", "29511"]
    assert launcher_args(1, 2, "192.168.200.12", "29511")[-1] == "--headless"
    assert launcher_args(1, 2, "192.168.200.12", "29511")[3] == "1"


def test_f19_names_the_host_the_master_the_interface_and_the_fix():
    message = unreachable_master("spark-2", "198.18.0.180", 29511, "spark-1", "eth1", "198.18.1.13", 5, "198.18.1.0/24")
    assert message.startswith("[F19] spark-2: cannot open TCP to vLLM's master 198.18.0.180:29511 (rank 0 on spark-1) "
                              "from its interconnect eth1 (198.18.1.13) within 5 s")
    assert "ping -I eth1 198.18.0.180" in message and "TCP 29511 from 198.18.1.0/24" in message


@pytest.mark.parametrize(
    "address, expected",
    [
        ("192.168.200.12", ""),
        # the seed's failure: the master on the head's management address
        ("10.1.230.12", "[F19] spark-1: vLLM's master address 10.1.230.12 (vllm_cluster_mp_master_addr) is not the "
                        "head's interconnect address 192.168.200.12 (enp1s0f0np0, 192.168.200.0/24)"),
    ],
)
def test_master_problems(address, expected):
    problems = master_problems("spark-1", address, "192.168.200.12", "enp1s0f0np0", "192.168.200.0/24")
    assert (problems == []) if not expected else (len(problems) == 1 and problems[0].startswith(expected))


def _container(running, status="running", code=0):
    return {"State": {"Running": running, "Status": status, "ExitCode": code, "FinishedAt": "2026-12-03T21:40:02.1Z"}}


RANKS = {"spark-1": 0, "spark-2": 1, "spark-3": 2}


@pytest.mark.parametrize(
    "containers, expected",
    [
        ({"spark-1": _container(True), "spark-2": _container(True), "spark-3": _container(True)}, []),
        # never started: the vllm play starts them, nothing to report
        ({"spark-1": None, "spark-2": None, "spark-3": None}, []),
        ({}, []),
        # a headless rank died; rank 0 still runs (its /health stays 200)
        ({"spark-1": _container(True), "spark-2": _container(False, "exited", 137), "spark-3": _container(True)},
         ["[F20] spark-2: vLLM's rank 1 (container vllm-cluster-vllm) is exited (exit code 137 at 2026-12-03T21:40:02)"]),
        # rank 0 followed it (it exits 0 within a minute), and a third node never got its container
        ({"spark-1": _container(False, "exited", 0), "spark-2": _container(False, "exited", 137), "spark-3": None},
         ["[F20] spark-1: vLLM's rank 0", "[F20] spark-2: vLLM's rank 1",
          "[F20] spark-3: vLLM's rank 2 (container vllm-cluster-vllm) does not exist"]),
    ],
)
def test_rank_problems(containers, expected):
    problems = rank_problems(containers, RANKS, "vllm-cluster-vllm")
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected):
        assert problem.startswith(start)
        assert "site.yml --tags vllm -e vllm_cluster_restart=true" in problem


@pytest.mark.parametrize(
    "rc, error, expected",
    [
        (0, "", ""),
        (1, "OSError: [Errno 98] Address already in use\n",
         "[F19] spark-1: OSError: [Errno 98] Address already in use: rank 0 could not bind its rendezvous there either. "
         "Fix: free port 29501 on spark-1 or set vllm_cluster_mp_master_port"),
        (1, "", "[F19] spark-1: the listener exited 1: rank 0 could not bind"),
    ],
)
def test_listen_problem(rc, error, expected):
    problem = listen_problem("spark-1", rc, error, 29501)
    assert problem.startswith(expected) and bool(problem) is bool(expected), problem
