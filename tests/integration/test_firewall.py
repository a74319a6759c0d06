"""The optional Ray firewall (ray_firewall role): on, Ray's pinned ports refuse the controller over the
management network while the cluster still validates over the interconnect and vLLM's API answers;
off again, the same ports answer. The lab runs without it, so each assertion starts from an open port."""

from __future__ import annotations

import re
import socket

import pytest

from conftest import VALIDATE_CHECK, task_outcome

MANAGEMENT = {"spark-1": "198.18.0.180", "spark-2": "198.18.0.181"}
# Ray's ports that listen on every interface (measured with `ss -ltnp` in the lab): the GCS and the head's
# metrics endpoints on the head; raylet, object manager and dashboard agent on both.
RAY_PORTS_ON_EVERY_INTERFACE = {
    "spark-1": [6379, 6380, 6381, 6382, 6383, 44217, 44227],
    "spark-2": [6380, 6381, 6382, 6383],
}
VLLM_API = ("spark-1", 8000)
TABLE = "inferops_vllm_cluster_ray"
ON = ("-e", "ray_firewall_enabled=true")


def connect(address: str, port: int) -> str:
    """From the controller: 'open', 'refused', or the error's name."""
    try:
        with socket.create_connection((address, port), timeout=3):
            return "open"
    except ConnectionRefusedError:
        return "refused"
    except OSError as error:
        return type(error).__name__


def ray_ports_from_management() -> dict[str, str]:
    return {f"{host}:{port}": connect(MANAGEMENT[host], port)
            for host, ports in RAY_PORTS_ON_EVERY_INTERFACE.items() for port in ports}


def changed(output: str) -> dict[str, int]:
    return {host: int(count) for host, count in re.findall(r"^(spark-\d)\s+: ok=\d+\s+changed=(\d+)", output, re.M)}


@pytest.fixture()
def firewall_off_afterwards(lab, tmp_path):
    yield
    result = lab.playbook(tmp_path, "--tags", "ray_firewall")
    assert result.returncode == 0, result.stdout[-3000:]


def test_firewall_closes_rays_ports_to_management_and_keeps_the_cluster(lab, tmp_path, firewall_off_afterwards):
    assert set(ray_ports_from_management().values()) == {"open"}, "the lab runs without the firewall"

    result = lab.playbook(tmp_path, "--tags", "ray_firewall,validate", *ON)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert set(ray_ports_from_management().values()) == {"refused"}, ray_ports_from_management()
    # vLLM's API is for clients: not Ray's, not closed
    assert connect(MANAGEMENT[VLLM_API[0]], VLLM_API[1]) == "open"
    # the validate step (node table, placement and 2 MB rendezvous dry-runs) passed with the rules in force
    assert task_outcome(output, VALIDATE_CHECK, "spark-1") in ("ok", "changed"), output[-3000:]
    refused = lab.node("spark-1", "nft", "list", "chain", "inet", TABLE, "input").stdout
    assert int(re.search(r"counter packets (\d+)", refused).group(1)) >= len(RAY_PORTS_ON_EVERY_INTERFACE["spark-1"])
    rules = lab.node("spark-1", "stat", "--format", "%a %U", "/etc/inferops-vllm-cluster/ray-firewall.nft").stdout.split()
    assert rules == ["600", "root"]

    again = lab.playbook(tmp_path, "--tags", "ray_firewall", *ON)
    assert again.returncode == 0 and changed(again.stdout) == {"spark-1": 0, "spark-2": 0}, again.stdout[-3000:]

    # a flushed table (as after a reboot on a host without systemd) is loaded again by the next run
    lab.node("spark-2", "nft", "delete", "table", "inet", TABLE)
    assert connect(MANAGEMENT["spark-2"], 6380) == "open"
    healed = lab.playbook(tmp_path, "--tags", "ray_firewall", *ON)
    assert healed.returncode == 0 and changed(healed.stdout) == {"spark-1": 0, "spark-2": 1}, healed.stdout[-3000:]
    assert connect(MANAGEMENT["spark-2"], 6380) == "refused"

    off = lab.playbook(tmp_path, "--tags", "ray_firewall")
    assert off.returncode == 0, off.stdout[-3000:]
    for host in MANAGEMENT:
        assert TABLE not in lab.node(host, "nft", "list", "tables").stdout
    assert set(ray_ports_from_management().values()) == {"open"}


@pytest.mark.readonly
def test_bad_firewall_source_fails_before_anything_changes(lab, tmp_path, unchanged):
    result = lab.playbook(tmp_path, "--tags", "ray_firewall", *ON, "-e", '{"ray_firewall_allowed_cidrs": ["198.18.2.0/33"]}')
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "ray_firewall_allowed_cidrs" in output and "198.18.2.0/33" in output, output[-3000:]
    assert TABLE not in lab.node("spark-1", "nft", "list", "tables").stdout


@pytest.mark.readonly
def test_boot_unit_without_systemd_fails_before_anything_changes(lab, tmp_path, unchanged):
    # the lab's nodes run tini, not systemd: asking for the boot unit there must say so, not half-install
    result = lab.playbook(tmp_path, "--tags", "ray_firewall", *ON, "-e", "ray_firewall_persist=true")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "ray_firewall_persist=true needs systemd as the service manager" in output, output[-3000:]
    assert TABLE not in lab.node("spark-1", "nft", "list", "tables").stdout
