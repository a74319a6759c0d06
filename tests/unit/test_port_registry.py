"""Every port a role opens is in the port registry (plugins/module_utils/_ports.py): a port variable in a role's
defaults, a port flag in a command or a *_PORT variable in a template that the registry lacks fails here."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _ports

ROOT = pathlib.Path(__file__).resolve().parents[2]
KNOWN = set(_ports.variables()) | set(_ports.NOT_OPENED)
# A port flag of Ray's or vLLM's command line, or a *_PORT environment variable, and the variable that sets it.
# Written three ways: '--port=' ~ name or '--port', name (a command list), node-manager-port: "{{ name }}" (ray
# start's flags as a dict), NAME_PORT={{ name }} (an env file).
FLAG = re.compile(r"(?:--[a-z-]*port|[a-z-]+-port|[A-Z_]+_PORT)\b['\"]?\s*(?:=['\"]?\s*~|[:=,])\s*['\"]?(?:\{\{\s*)?"
                  r"([a-z_][a-z0-9_]*)")


def port_variables(text: str) -> list[str]:
    """The port settings of a defaults file: names ending in _port or _ports."""
    return [name for name in (yaml.safe_load(text) or {}) if re.search(r"_ports?$", name)]


def flag_variables(text: str) -> list[str]:
    return [match.group(1) for match in FLAG.finditer(text)]


def unregistered(path: pathlib.Path, text: str | None = None) -> list[str]:
    text = path.read_text() if text is None else text
    names = port_variables(text) if path.match("defaults/main.yml") else flag_variables(text)
    return [f"{path.relative_to(ROOT)}: {name}" for name in names if name not in KNOWN]


def files() -> list[pathlib.Path]:
    return sorted([*(ROOT / "roles").glob("*/defaults/main.yml"), *(ROOT / "roles").glob("*/vars/main.yml"),
                   *(ROOT / "roles").glob("*/tasks/*.yml"), *(ROOT / "roles").glob("*/templates/*.j2")])


def test_every_port_a_role_opens_is_registered():
    found = [hit for path in files() for hit in unregistered(path)]
    assert not found, "add these to plugins/module_utils/_ports.py (or NOT_OPENED):\n" + "\n".join(found)


def test_the_scan_sees_the_ports_it_must():
    # Without these the scan would pass by seeing nothing.
    seen = {name for path in files()
            for name in (port_variables(path.read_text()) if path.match("defaults/main.yml")
                         else flag_variables(path.read_text()))}
    assert {"vllm_cluster_ray_port", "vllm_cluster_ray_node_manager_port", "vllm_server_port",
            "vllm_cluster_ray_autoscaler_metric_port", "ray_head_dashboard_port"} <= seen


@pytest.mark.parametrize("path, text, expected", [
    ("roles/vllm_server/defaults/main.yml", "vllm_server_metrics_port: 9100\n", "vllm_server_metrics_port"),
    ("roles/ray_head/vars/main.yml", "  metrics-port: \"{{ ray_head_metrics_port }}\"\n", "ray_head_metrics_port"),
    ("roles/_common/templates/cluster.env.j2", "OTEL_PORT={{ vllm_cluster_otel_port }}\n", "vllm_cluster_otel_port"),
])
def test_the_scan_finds_an_unregistered_port(path, text, expected):
    assert unregistered(ROOT / path, text) == [f"{path}: {expected}"]
