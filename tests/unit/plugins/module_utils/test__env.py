"""What an inventory may add to a container's environment, and a container's drift from the pins."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env import env_problems, pinned_env_drift, pinned_env_problem
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

RESERVED = ["VLLM_HOST_IP", "NCCL_SOCKET_IFNAME"]


@pytest.mark.parametrize(
    "case, env, expected",
    [
        ("plain", {"HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": 1}, []),
        ("empty", {}, []),
        ("the issue's injection", {"X": "x\nRAY_ADDRESS=elsewhere:1"},
         ["v: the value of X holds a line break; in an env file the rest would become a variable of its own."]),
        ("carriage return", {"X": "x\rY=1"}, ["v: the value of X holds a line break; in an env file the rest would become a variable of its own."]),
        ("a pinned name", {"NCCL_SOCKET_IFNAME": "eth0"},
         ["v: NCCL_SOCKET_IFNAME is set by the collection (interconnect pinning, Ray auth, caches); "
          "an extra value would override it unseen."]),
        ("the hub token", {"HF_TOKEN": "hf_x"},
         ["v: HF_TOKEN would show in `docker inspect` and /proc/*/environ; set vllm_cluster_hf_token instead "
          "(kept in Vault, read from a root-only file)."]),
        ("the API key", {"VLLM_API_KEY": "k"},
         ["v: VLLM_API_KEY would show in `docker inspect` and /proc/*/environ; set vllm_server_api_key instead "
          "(kept in Vault, read from a root-only file)."]),
        ("not a name", {"1X": "1", "A B": "1"},
         ["v: '1X' is not an environment variable name (letters, digits and _, not starting with a digit).",
          "v: 'A B' is not an environment variable name (letters, digits and _, not starting with a digit)."]),
        ("a nested value", {"X": {"a": 1}}, ["v: the value of X is not a string or number."]),
        ("null", {"X": None}, ["v: the value of X is not a string or number."]),
        ("not a dict", ["X=1"], ["v must be a mapping of variable names to values, not list."]),
    ],
)
def test_env_problems(case, env, expected):
    assert env_problems(env, RESERVED, "v") == expected, case


def test_env_problems_never_quote_a_value():
    secret = "hf_secret\nVLLM_HOST_IP=1.2.3.4"
    assert all("hf_secret" not in p for p in env_problems({"HF_TOKEN": secret}, RESERVED, "v"))


PINS = {"VLLM_HOST_IP": "198.18.1.12", "NCCL_SOCKET_IFNAME": "eth1"}


@pytest.mark.parametrize(
    "case, env_list, drift",
    [
        ("as pinned", ["PATH=/bin", "VLLM_HOST_IP=198.18.1.12", "NCCL_SOCKET_IFNAME=eth1"], []),
        ("overridden", ["VLLM_HOST_IP=198.18.1.12", "NCCL_SOCKET_IFNAME=eth0"], ["NCCL_SOCKET_IFNAME=eth0 (pinned: eth1)"]),
        ("missing", ["NCCL_SOCKET_IFNAME=eth1"], ["VLLM_HOST_IP=(unset) (pinned: 198.18.1.12)"]),
        ("a value with =", ["VLLM_HOST_IP=a=b", "NCCL_SOCKET_IFNAME=eth1"], ["VLLM_HOST_IP=a=b (pinned: 198.18.1.12)"]),
        ("no env at all", None, ["NCCL_SOCKET_IFNAME=(unset) (pinned: eth1)", "VLLM_HOST_IP=(unset) (pinned: 198.18.1.12)"]),
    ],
)
def test_pinned_env_drift(case, env_list, drift):
    assert pinned_env_drift(env_list, PINS) == drift, case


DRIFT = ["GLOO_SOCKET_IFNAME=ic0 (pinned: bogus0)", "VLLM_HOST_IP=(unset) (pinned: 198.18.1.13)"]


@pytest.mark.parametrize(
    "case, found, offline, expected",
    [
        ("every pin held", {"exists": True, "drift": []}, False, ""),
        ("no container: named by the checks before", {"exists": False, "drift": []}, False, ""),
        ("nothing read", None, False, ""),
        ("two pins drifted", {"exists": True, "drift": DRIFT}, False,
         "[F7] spark-2: container ray-w runs with GLOO_SOCKET_IFNAME=ic0 (pinned: bogus0), VLLM_HOST_IP=(unset) "
         "(pinned: 198.18.1.13): Ray, vLLM, NCCL or Gloo there would use another address or interface than ic0 "
         "(198.18.1.13). Fix: remove whatever set it"),
        ("staged weights: the download risk too", {"exists": True, "drift": DRIFT[:1]}, True,
         "than ic0 (198.18.1.13), or a rank would download weights inside vLLM's load window (F17). Fix:"),
    ],
)
def test_pinned_env_problem(case, found, offline, expected):
    problem = pinned_env_problem(found, "spark-2", "ray-w", "ic0", "198.18.1.13", offline)
    if not expected:
        assert problem == "", case
    else:
        assert expected in problem and problem.endswith(f"See {TROUBLESHOOTING}#f7"), (case, problem)
