"""The cluster's firewall (ray_firewall role, on by default since #32): from the management side, the controller's,
a node answers only SSH and, on the head, vLLM's API, while the cluster validates and serves over the interconnect.
Off, every port the cluster listens on answers there, on the management address and (Linux's weak host model) on
the interconnect address routed through it. Rules that would shut the controller out are put back by the node."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _ports
from conftest import TEST_PROGRAM_PORT, VALIDATE_CHECK, task_outcome

MANAGEMENT = {"spark-1": "198.18.0.180", "spark-2": "198.18.0.181"}
INTERCONNECT = {"spark-1": "198.18.1.12", "spark-2": "198.18.1.13"}
# What the management side may reach: the stand-in for sshd (Ansible's port) everywhere, vLLM's API on the head.
ADMITTED = {"spark-1": {22, 8000}, "spark-2": {22}}
TABLE = "inferops_vllm_cluster_ray"
OFF = ("-e", "ray_firewall_enabled=false")
REACH = pathlib.Path(__file__).resolve().parents[2] / "lab" / "reach.py"


def reach(address: str, ports: list[int]) -> dict[int, str]:
    """From the controller: port -> 'open', 'refused', or the error's name."""
    out = subprocess.run([sys.executable, str(REACH), address, json.dumps(ports)], capture_output=True, text=True,
                         check=True).stdout
    return {int(port): outcome for port, outcome in json.loads(out).items()}


def connect(address: str, port: int) -> str:
    return reach(address, [port])[port]


def listeners(lab, host: str) -> dict[int, list[str]]:
    """port -> ss's lines for it (each names the processes that hold it), beyond loopback. A port can be held on
    several addresses and by several processes (inherited or shared sockets)."""
    held: dict[int, list[str]] = {}
    for line in lab.node(host, "ss", "-Hltnp").stdout.splitlines():
        address, port = line.split()[3].rsplit(":", 1)
        if not address.startswith(("127.", "[::1]", "[::ffff:127.")):
            held.setdefault(int(port), []).append(line.strip())
    return held


def listening(lab, host: str) -> list[int]:
    """Every TCP port something on host listens on, beyond loopback (Ray, vLLM, its ranks, the stand-in sshd)."""
    return sorted(listeners(lab, host))


def from_management(lab) -> dict[str, dict[int, str]]:
    """host -> port -> what the controller meets at the host's management address."""
    return {host: reach(MANAGEMENT[host], listening(lab, host)) for host in MANAGEMENT}


def through_management(lab, host: str) -> dict[int, str]:
    """port -> what a host on the management network meets at host's interconnect address, routed through host's
    management address (a throwaway container, labelled as the lab's: destroy.yml removes it with the lab)."""
    image = subprocess.run(["docker", "inspect", "--format", "{{.Config.Image}}", f"inferops-lab-{host}"],
                           capture_output=True, text=True, check=True).stdout.strip()
    probe = subprocess.run(
        ["docker", "run", "--rm", "-i", "--label", "inferops.vllm_cluster.lab=inferops-lab", "--network", "inferops-lab-mgmt",
         "--cap-add", "NET_ADMIN", "--entrypoint", "sh", image, "-c",
         f"ip route add 198.18.1.0/24 via {MANAGEMENT[host]} && python3 - {INTERCONNECT[host]} '{json.dumps(listening(lab, host))}'"],
        input=REACH.read_text(), capture_output=True, text=True, check=True)
    return {int(port): outcome for port, outcome in json.loads(probe.stdout).items()}


def rules_in_force(lab, host: str) -> str:
    """The firewall's table on host as nft lists it, its counters left out (other tests' probes move them)."""
    listed = lab.node(host, "nft", "list", "table", "inet", TABLE).stdout
    return re.sub(r"counter packets \d+ bytes \d+", "counter", listed)


def reachable(matrix: dict[int, str]) -> set[int]:
    return {port for port, outcome in matrix.items() if outcome == "open"}


def changed(output: str) -> dict[str, int]:
    return {host: int(count) for host, count in re.findall(r"^(spark-\d)\s+: ok=\d+\s+changed=(\d+)", output, re.M)}


@pytest.mark.readonly
def test_the_management_side_reaches_only_ssh_and_the_api(lab):
    """#32 item 2-3: before, Ray's GCS, raylets and agents, vLLM's engine and its ranks answered the management side
    on their management and (routed) interconnect addresses. Now only what ADMITTED names does."""
    matrix = from_management(lab)
    assert len(matrix["spark-1"]) > 10, matrix  # the cluster runs: Ray, vLLM and its ranks listen
    for host in MANAGEMENT:
        assert reachable(matrix[host]) == ADMITTED[host] & set(matrix[host]), (host, matrix[host])
        assert set(matrix[host].values()) <= {"open", "refused"}, (host, matrix[host])
    routed = through_management(lab, "spark-1")
    # the stand-in sshd binds every address: it answers there too, so the probe's path is known to work
    assert reachable(routed) == {22}, routed


def ports_handed_to_containers(lab, host: str) -> dict[str, int]:
    """Every port the cluster's containers on host (Ray, vLLM, the supervisor) were started with: --*port flags and
    *_PORT variables."""
    names = [name for name in lab.node(host, "docker", "ps", "--format", "{{.Names}}").stdout.split()
             if name.startswith("vllm-cluster-")]
    # One call for all; a container gone since (the link gate's, run by a read-only test beside) is left out: docker
    # prints the others and exits 1.
    found = lab.node(host, "docker", "inspect", *names, check=False).stdout if names else ""
    given = {}
    for inspected in json.loads(found or "[]"):
        name = inspected["Name"].lstrip("/")
        # a command may be one shell line: its words are read wherever they stand, `--port 1` or `--port=1`
        command = " ".join(inspected["Config"]["Entrypoint"] or []) + " " + " ".join(inspected["Config"]["Cmd"] or [])
        given.update({f"{name} {flag}": int(value)
                      for flag, value in re.findall(r"(--[a-z-]*port)[= ]+(\d+)\b", command)})
        given.update({f"{name} {variable}": int(value) for variable, value in
                      (entry.split("=", 1) for entry in inspected["Config"]["Env"] or [])
                      if variable.endswith("_PORT") and value.isdigit()})
    return given


@pytest.mark.readonly
def test_every_port_a_node_listens_on_is_in_the_port_registry(lab):
    """#33: beyond loopback, a node listens only on the registry's ports (module_utils/_ports.py, at the lab's
    values), Ray's workers' range, the kernel's ephemeral range (vLLM's engine, its ranks, Gloo: nobody can name
    them), the lab's stand-in sshd and the tests' own programs (TEST_PROGRAM_PORT); every port a role hands to the
    cluster's containers is in the registry. A port a role opens without a row (its server, Ray's daemons, the
    supervisor, a flag given to vLLM) fails."""
    values = {port.variable: port.fallback for port in _ports.PORTS}
    named = {int(port) for port in values.values()}
    given = {}
    for host in MANAGEMENT:
        low, high = (int(v) for v in lab.node(host, "cat", "/proc/sys/net/ipv4/ip_local_port_range").stdout.split())
        held = listeners(lab, host)
        assert len(held) > 5, held  # Ray's daemons and vLLM's ranks listen: the read worked
        unnamed = {port: lines for port, lines in held.items()
                   if port not in named | {22, TEST_PROGRAM_PORT} and not _ports.RANGE_FALLBACK[_ports.RANGE_LOW]
                   <= port <= _ports.RANGE_FALLBACK[_ports.RANGE_HIGH] and not low <= port <= high}
        assert not unnamed, (host, unnamed)
        given.update({f"{host} {what}": port for what, port in ports_handed_to_containers(lab, host).items()})
    assert given, "no port given to the cluster's containers was read: the check below would judge nothing"
    bounds = set(_ports.RANGE_FALLBACK.values())  # Ray's --min-worker-port and --max-worker-port
    assert {what: port for what, port in given.items() if port not in named | bounds} == {}, given


# Beside the weights group, whose playbooks (staging, over the interconnect) never run the firewall's play and work
# under any of these rules; serial they cost the suite a minute.
@pytest.mark.grouped("runtime-image")
def test_off_every_cluster_port_answers_the_management_side_and_on_closes_them(lab, tmp_path):
    """The matrix before #32 (the firewall off), then on again: loaded, idempotent, healed after a flush."""
    off = lab.playbook(tmp_path, "--tags", "ray_firewall", *OFF)
    try:
        assert off.returncode == 0, off.stdout[-3000:]
        assert TABLE not in lab.node("spark-1", "nft", "list", "tables").stdout
        opened = from_management(lab)
        for host in MANAGEMENT:
            # Ray's GCS (head), raylet, object manager and dashboard agent answer on every interface
            assert {6380, 6381, 6382} <= reachable(opened[host]), (host, opened[host])
        assert 6379 in reachable(opened["spark-1"])
        assert len(reachable(through_management(lab, "spark-1"))) > len(ADMITTED["spark-1"])
    finally:
        on = lab.playbook(tmp_path, "--tags", "ray_firewall,validate")
    output = on.stdout + on.stderr
    assert on.returncode == 0, output[-3000:]
    assert task_outcome(output, VALIDATE_CHECK, "spark-1") in ("ok", "changed"), output[-3000:]
    closed = from_management(lab)
    for host in MANAGEMENT:
        assert reachable(closed[host]) == ADMITTED[host] & set(closed[host]), (host, closed[host])
    refused = lab.node("spark-1", "nft", "list", "chain", "inet", TABLE, "input").stdout
    assert int(re.search(r"counter packets (\d+)", refused).group(1)) > 0
    rules = lab.node("spark-1", "stat", "--format", "%a %U", "/etc/inferops-vllm-cluster/ray-firewall.nft").stdout.split()
    assert rules == ["600", "root"]

    again = lab.playbook(tmp_path, "--tags", "ray_firewall")
    assert again.returncode == 0 and changed(again.stdout) == {"spark-1": 0, "spark-2": 0}, again.stdout[-3000:]

    # a flushed table (as after a reboot on a host without systemd) is loaded again by the next run
    lab.node("spark-2", "nft", "delete", "table", "inet", TABLE)
    assert connect(MANAGEMENT["spark-2"], 6380) == "open"
    healed = lab.playbook(tmp_path, "--tags", "ray_firewall")
    assert healed.returncode == 0 and changed(healed.stdout) == {"spark-1": 0, "spark-2": 1}, healed.stdout[-3000:]
    assert connect(MANAGEMENT["spark-2"], 6380) == "refused"


@pytest.mark.grouped("runtime-image")
def test_rules_that_would_shut_the_controller_out_are_put_back_and_reported(lab, tmp_path):
    """ray_firewall_ssh_port=2222 on a node Ansible reaches on 22: with those rules in force the controller's new
    connection is refused, the node's guard puts the previous rules back, and the play stops, naming why."""
    before = rules_in_force(lab, "spark-2")
    result = lab.playbook(tmp_path, "--tags", "ray_firewall", "--limit", "spark-2", "-e", "ray_firewall_ssh_port=2222",
                          "-e", "ray_firewall_confirm_timeout=10")
    output = " ".join((result.stdout + result.stderr).split())
    try:
        assert result.returncode != 0, output[-3000:]
        assert ("spark-2: the firewall would cut Ansible off: with the new rules in force, a new connection from the "
                "controller to 198.18.0.181:22 failed") in output, output[-3000:]
        assert "The node put back the rules it had before" in output, output[-3000:]
        assert rules_in_force(lab, "spark-2") == before
        assert connect(MANAGEMENT["spark-2"], 22) == "open" and connect(MANAGEMENT["spark-2"], 6380) == "refused"
        # the boot unit's file keeps the rules confirmed last; the refused ones stay a candidate, tried again next run
        assert "2222" not in lab.node("spark-2", "cat", "/etc/inferops-vllm-cluster/ray-firewall.nft").stdout
        assert "2222" in lab.node("spark-2", "cat", "/etc/inferops-vllm-cluster/ray-firewall.candidate.nft").stdout
    finally:
        restored = lab.playbook(tmp_path, "--tags", "ray_firewall", "--limit", "spark-2")
    # the candidate written again and loaded; the confirmed file already held these rules
    assert restored.returncode == 0 and changed(restored.stdout) == {"spark-2": 2}, restored.stdout[-3000:]
    assert rules_in_force(lab, "spark-2") == before


@pytest.mark.readonly
@pytest.mark.parametrize(("settings", "message"), [
    ({"ray_firewall_allowed_cidrs": ["198.18.2.0/33"]}, "ray_firewall_allowed_cidrs has 198.18.2.0/33, not a network"),
    ({"ray_firewall_management_ports": [9100, "http"]},
     "spark-1: ray_firewall_management_ports=http is not a TCP port (1-65535)"),
    ({"ray_firewall_confirm_timeout": 3}, "spark-1: ray_firewall_confirm_timeout=3 leaves the controller too little time"),
    # the lab's nodes run tini, not systemd: asking for the boot unit there must say so, not half-install
    ({"ray_firewall_persist": True}, "ray_firewall_persist=true needs systemd as the service manager"),
], ids=["source", "management-port", "confirm-timeout", "boot-unit"])
def test_bad_firewall_settings_fail_before_anything_changes(lab, tmp_path, unchanged, settings, message):
    before = rules_in_force(lab, "spark-1")
    result = lab.playbook(tmp_path, "--tags", "ray_firewall", "-e", json.dumps(settings))
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0
    assert message in output, output[-3000:]
    assert rules_in_force(lab, "spark-1") == before
