"""The port registry: which ports a host opens under each backend, what preflight refuses of them, what diagnose
probes, and the table the documentation shows."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends, _ports

ROOT = pathlib.Path(__file__).resolve().parents[4]
RAY = _backends.traits("ray")
MP = _backends.traits("mp")
RAY_WORKER_PORTS = ["vllm_cluster_ray_node_manager_port", "vllm_cluster_ray_object_manager_port",
                    "vllm_cluster_ray_dashboard_agent_grpc_port", "vllm_cluster_ray_metrics_export_port",
                    "vllm_cluster_ray_runtime_env_agent_port", "vllm_cluster_ray_dashboard_agent_listen_port"]


def test_every_row_is_in_its_domain():
    assert not _ports.domain_problems()


@pytest.mark.parametrize("variable", _ports.variables())
def test_a_rows_fallback_is_its_roles_default(variable):
    # Plays that do not load the owning role (preflight, diagnose) read the port through the fallback.
    fallbacks = {port.variable: port.fallback for port in _ports.PORTS} | _ports.RANGE_FALLBACK
    defaults = {}
    for path in (ROOT / "roles").glob("*/defaults/main.yml"):
        defaults |= yaml.safe_load(path.read_text()) or {}
    assert defaults[variable] == fallbacks[variable]


@pytest.mark.parametrize(
    "case, traits, is_head, staged, held, expected",
    [
        ("ray head", RAY, True, False, (),
         [port.variable for port in _ports.PORTS if port.needs in ("runs_ray", "always")]),
        ("ray worker: only the every-node ports", RAY, False, False, (), RAY_WORKER_PORTS),
        ("mp head: the API and the rendezvous, no Ray", MP, True, False, (),
         ["vllm_server_port", "vllm_cluster_mp_master_port", "vllm_cluster_link_port"]),
        ("mp worker: nothing of its own", MP, False, False, (), []),
        ("staged weights on the head", MP, True, True, (),
         ["vllm_server_port", "vllm_cluster_mp_master_port", "vllm_cluster_weights_port", "vllm_cluster_link_port"]),
        ("vLLM already runs: its ports are its own", MP, True, True, ("vllm",),
         ["vllm_cluster_weights_port", "vllm_cluster_link_port"]),
        ("the link gate measures: its port is its own", MP, True, False, ("link",),
         ["vllm_server_port", "vllm_cluster_mp_master_port"]),
        ("Ray already runs on a worker", RAY, False, False, ("ray",), []),
    ],
)
def test_what_a_host_opens(case, traits, is_head, staged, held, expected):
    assert list(_ports.opened({}, traits, is_head, staged, held)) == expected, case


def test_a_set_value_wins_over_the_fallback_and_empty_falls_back():
    opened = _ports.opened({"vllm_server_port": "9000", "vllm_cluster_mp_master_port": ""}, MP)
    assert opened == {"vllm_server_port": "9000", "vllm_cluster_mp_master_port": 29501, "vllm_cluster_link_port": 29520}


@pytest.mark.parametrize(
    "case, traits, values, staged, expected",
    [
        ("the defaults", RAY, {}, True, []),
        ("the defaults, mp", MP, {}, True, []),
        ("not a port", RAY, {"vllm_server_port": 70000, "vllm_cluster_ray_port": "x"},
         False, ["vllm_cluster_ray_port=x is not a TCP port (1-65535).",
                 "vllm_server_port=70000 is not a TCP port (1-65535)."]),
        ("given twice: named once", RAY, {"vllm_cluster_ray_node_manager_port": 8000}, False,
         ["vllm_cluster_ray_node_manager_port=8000 is also given to vllm_server_port."]),
        ("inside the workers' range", RAY, {"vllm_server_port": 12000}, False,
         ["vllm_server_port=12000 lies inside Ray's worker port range 10002-19999."]),
        ("an inverted range", RAY, {"vllm_cluster_ray_min_worker_port": 20000}, False,
         ["vllm_cluster_ray_min_worker_port=20000 is not below vllm_cluster_ray_max_worker_port=19999: Ray needs a "
          "range of ports for its workers."]),
        # what the five hand lists missed: the staging port was checked free but neither in range nor for twins
        ("the weights port inside the workers' range", RAY, {"vllm_cluster_weights_port": 15000}, True,
         ["vllm_cluster_weights_port=15000 lies inside Ray's worker port range 10002-19999."]),
        ("the weights port on the rendezvous", MP, {"vllm_cluster_weights_port": 29501}, True,
         ["vllm_cluster_mp_master_port=29501 is also given to vllm_cluster_weights_port."]),
        ("weights not staged: its port opens nothing", MP, {"vllm_cluster_weights_port": 29501}, False, []),
        ("the link gate's port on the rendezvous", MP, {"vllm_cluster_link_port": 29501}, False,
         ["vllm_cluster_mp_master_port=29501 is also given to vllm_cluster_link_port."]),
        # without Ray, Ray's ports and range open nothing
        ("mp: a port inside Ray's range is fine", MP, {"vllm_server_port": 12000}, False, []),
        ("mp: Ray's ports are not checked", MP, {"vllm_cluster_ray_port": 8000}, False, []),
    ],
)
def test_what_preflight_refuses(case, traits, values, staged, expected):
    assert _ports.problems(values, traits, staged) == expected, case


@pytest.mark.parametrize(
    "case, traits, is_head, expected",
    [
        ("ray head: every interconnect port, not the API (management) nor the dashboard (loopback)", RAY, True,
         {"Ray GCS": 6379, "Ray raylet": 6380, "Ray object manager": 6381, "Ray dashboard agent (gRPC)": 6382,
          "Ray metrics export": 6383, "Ray runtime-env agent": 6384, "Ray dashboard agent (HTTP)": 52365,
          "Ray client server": 10001, "Ray autoscaler metrics": 44217, "Ray dashboard metrics": 44227,
          "weights staging (while copying)": 29510, "link gate rendezvous (while measuring)": 29520}),
        ("mp head", MP, True, {"vLLM rendezvous (torch's TCP store)": 29501, "weights staging (while copying)": 29510,
                               "link gate rendezvous (while measuring)": 29520}),
        ("mp worker", MP, False, {}),
    ],
)
def test_what_diagnose_probes(case, traits, is_head, expected):
    probes = _ports.probes({}, traits, is_head, weights_staged=True)
    assert {probe["name"]: probe["port"] for probe in probes} == expected, case
    assert [probe["name"] for probe in probes if probe["transient"]] == (
        ["weights staging (while copying)", "link gate rendezvous (while measuring)"] if is_head else [])


def test_the_documentation_shows_the_table():
    assert _ports.docs_table() in (ROOT / "docs" / "architecture.md").read_text()


@pytest.mark.parametrize("value, expected", [
    (22, 22), ("8000", 8000), (" 6379 ", 6379), (65535, 65535), (1, 1),
    (0, None), (65536, None), ("", None), (None, None), ("ssh", None), ("-22", None),
    # what int() alone would take ('+22', '2_2') or trip over ('²' passes isdigit() but not int())
    ("+22", None), ("2_2", None), ("\u00b2", None), ("\u0663", None),
])
def test_the_one_reading_of_a_port(value, expected):
    assert _ports.tcp_port(value) == expected
