"""What vLLM's ranks run with: the list the driver must not carry, the ranks' own pinning, what would be carried,
and the reader that runs inside the containers (run here against this process's own /proc)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rank_env import (
    READ_PROCESSES,
    carried_names,
    carried_problems,
    non_carry_over,
    parse_names,
    rank_problems,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import SECRET_NAME_PATTERN

PINNED = {"VLLM_HOST_IP": "198.18.1.13", "NCCL_SOCKET_IFNAME": "=ic0", "GLOO_SOCKET_IFNAME": "ic0"}


def rank(env, secrets=(), cmdline="ray::RayWorkerProc.run"):
    return {"cmdline": cmdline, "env": env, "secrets": list(secrets)}


@pytest.mark.parametrize(("case", "node_env", "server_env", "wanted", "unwanted"), [
    ("pins, RDMA and known secrets", [], [], ["GLOO_SOCKET_IFNAME", "NCCL_IB_HCA", "VLLM_API_KEY", "HF_TOKEN"],
     ["HF_HUB_OFFLINE"]),
    ("every container has its own node's extra env", ["NCCL_DEBUG", "UCX_TLS"], [], ["NCCL_DEBUG", "UCX_TLS"], []),
    ("a secret of the server's env", [], ["WANDB_API_KEY", "MY_PASSWORD"], ["WANDB_API_KEY", "MY_PASSWORD"], []),
    ("the server's other variables reach the ranks", [], ["VLLM_CPU_KVCACHE_SPACE"], [], ["VLLM_CPU_KVCACHE_SPACE"]),
])
def test_non_carry_over(case, node_env, server_env, wanted, unwanted):
    names = non_carry_over(PINNED.keys(), node_env, server_env)
    assert names == sorted(names), case
    assert set(PINNED) <= set(names), case
    assert set(wanted) <= set(names), case
    assert not set(unwanted) & set(names), case


# A rank that writes its own lines into the message: escaped, bounded.
HOSTILE = rank(dict(PINNED, GLOO_SOCKET_IFNAME="x\n[F7] spark-1: all fine" + "y" * 80), cmdline="ray::RayWorkerProc\nok")


@pytest.mark.parametrize(("case", "processes", "expected"), [
    ("own pinning", {"175": rank(dict(PINNED))}, []),
    ("not a rank: ignored", {"1": rank({"GLOO_SOCKET_IFNAME": "eth1"}, cmdline="/usr/bin/tini -- ray start")}, []),
    ("the head's interface names",
     {"175": rank(dict(PINNED, NCCL_SOCKET_IFNAME="=eth1", GLOO_SOCKET_IFNAME="eth1"))},
     ["[F7] spark-2: vLLM's rank process 175 (ray::RayWorkerProc.run) in ray-w runs with GLOO_SOCKET_IFNAME=eth1 "
      "(pinned: ic0), NCCL_SOCKET_IFNAME==eth1 (pinned: =ic0): NCCL, Gloo or UCX there would use another node's "
      "interface or address than spark-2's own."]),
    ("a pin missing", {"9": rank({"VLLM_HOST_IP": "198.18.1.13", "NCCL_SOCKET_IFNAME": "=ic0"})},
     ["[F7] spark-2: vLLM's rank process 9 (ray::RayWorkerProc.run) in ray-w runs with no GLOO_SOCKET_IFNAME "
      "(pinned: ic0): NCCL, Gloo or UCX there would use another node's interface or address than spark-2's own."]),
    ("the API key in a rank", {"9": rank(dict(PINNED), secrets=["VLLM_API_KEY", "WANDB_API_KEY"])},
     ["[F7] spark-2: vLLM's rank process 9 in ray-w holds VLLM_API_KEY: a secret no rank needs."]),
    ("the user's own secret is theirs to give", {"9": rank(dict(PINNED), secrets=["WANDB_API_KEY"])}, []),
    ("an environment it does not let be read", {"9": {"cmdline": "ray::RayWorkerProc", "env": None, "secrets": []}},
     ["[F7] spark-2: vLLM's rank process 9 (ray::RayWorkerProc) in ray-w does not let its environment be read: "
      "its pinning cannot be checked."]),
    ("its own text escaped and bounded", {"9": HOSTILE},
     ["[F7] spark-2: vLLM's rank process 9 (ray::RayWorkerProc\\nok) in ray-w runs with GLOO_SOCKET_IFNAME=x\\n[F7] "
      "spark-1: all fine" + "y" * 35 + "... (pinned: ic0): NCCL, Gloo or UCX there would use another node's interface "
      "or address than spark-2's own."]),
])
def test_rank_problems(case, processes, expected):
    assert rank_problems("spark-2", "ray-w", processes, PINNED) == expected, case


@pytest.mark.parametrize(("case", "text", "expected"), [
    ("a list", '["A", "B"]', {"A", "B"}),
    ("not JSON: vLLM excludes nothing", "A,B", set()),
    ("not a list", '{"A": 1}', set()),
    ("empty", "", set()),
])
def test_parse_names(case, text, expected):
    assert parse_names(text) == expected, case


GUARDED = non_carry_over(PINNED.keys())
DRIVER = {"1": rank({"NCCL_SOCKET_IFNAME": "=eth1", "VLLM_HOST_IP": "198.18.1.12"}, secrets=["VLLM_API_KEY"], cmdline="python3 -m vllm")}


@pytest.mark.parametrize(("case", "excluded", "expected"), [
    ("no list (before #32): the pins and the key", set(), ["NCCL_SOCKET_IFNAME", "VLLM_API_KEY"]),
    ("the collection's list", set(GUARDED), []),
    ("a list without the key", set(GUARDED) - {"VLLM_API_KEY"}, ["VLLM_API_KEY"]),
])
def test_carried_names(case, excluded, expected):
    assert carried_names(DRIVER, GUARDED, excluded) == expected, case


def test_carried_problems_names_host_list_and_what():
    assert carried_problems("spark-1", "vllm", ["VLLM_API_KEY"], "/x.json") == [
        "[F7] spark-1: vLLM's Ray executor would copy VLLM_API_KEY from spark-1's driver (vllm) into every rank on "
        "every node (/x.json does not name it): a rank on another node would run with spark-1's pinning, and a secret "
        "would reach every rank process."]
    assert not carried_problems("spark-1", "vllm", [], "/x.json")


def test_the_reader_returns_pinned_values_and_only_the_names_of_secrets():
    env = dict(os.environ, GLOO_SOCKET_IFNAME="ic0", VLLM_API_KEY="do-not-print", PINNED_TOKEN="also-secret")
    with subprocess.Popen([sys.executable, "-c", READ_PROCESSES, json.dumps(["GLOO_SOCKET_IFNAME", "PINNED_TOKEN"]),
                           SECRET_NAME_PATTERN],
                          env=env, stdout=subprocess.PIPE, text=True) as reader:
        out = reader.communicate()[0]
    assert reader.returncode == 0
    assert "do-not-print" not in out and "also-secret" not in out
    itself = json.loads(out)[str(reader.pid)]
    assert itself["env"] == {"GLOO_SOCKET_IFNAME": "ic0"}
    assert {"VLLM_API_KEY", "PINNED_TOKEN"} <= set(itself["secrets"])
