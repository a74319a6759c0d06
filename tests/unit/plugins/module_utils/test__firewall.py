"""What the cluster's firewall admits from outside the interconnect, and what it says after a rollback."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _firewall
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._firewall import (
    admitted_ports,
    confirm_message,
    confirm_problems,
)


@pytest.mark.parametrize(("case", "ports", "extra", "expected", "problems"), [
    ("SSH and the API on the head", {"ray_firewall_ssh_port": 22, "vllm_server_port": "8000"}, [], [22, 8000], []),
    ("a worker: no API", {"ray_firewall_ssh_port": "22", "vllm_server_port": ""}, [], [22], []),
    ("the operator's ports, once each", {"ray_firewall_ssh_port": 22}, [9100, "22"], [22, 9100], []),
    ("not a port", {"ray_firewall_ssh_port": "ssh"}, [70000],
     [], ["spark-1: ray_firewall_ssh_port=ssh is not a TCP port (1-65535). Fix: set it to the port number.",
          "spark-1: ray_firewall_management_ports=70000 is not a TCP port (1-65535). Fix: set it to the port number."]),
    ("zero", {"ray_firewall_ssh_port": 0}, [],
     [], ["spark-1: ray_firewall_ssh_port=0 is not a TCP port (1-65535). Fix: set it to the port number."]),
    # read as the port registry reads a port (one reading): what int() alone would have taken
    ("a sign or an underscore", {"ray_firewall_ssh_port": "+22"}, ["9_100"],
     [], ["spark-1: ray_firewall_ssh_port=+22 is not a TCP port (1-65535). Fix: set it to the port number.",
          "spark-1: ray_firewall_management_ports=9_100 is not a TCP port (1-65535). Fix: set it to the port number."]),
])
def test_admitted_ports(case, ports, extra, expected, problems):
    assert admitted_ports("spark-1", ports, extra) == {"ports": expected, "problems": problems}, case


def test_an_empty_ssh_port_is_no_port_when_required():
    assert admitted_ports("h", {"ray_firewall_ssh_port": ""}, [], ["ray_firewall_ssh_port"])["problems"] == [
        "h: ray_firewall_ssh_port= is not a TCP port (1-65535). Fix: set it to the port number."]


@pytest.mark.parametrize(("port", "seconds", "expected"), [
    (22, 30, []),
    ("0", "30", []),
    ("ssh", 30, ["h: ray_firewall_confirm_port=ssh is not a TCP port (1-65535, or 0 to rely on Ansible's reconnection "
                 "alone). Fix: set it to the port the controller reaches the node on."]),
    (22, 5, ["h: ray_firewall_confirm_timeout=5 leaves the controller too little time to confirm new rules before they "
             "are put back. Fix: set it to 10 seconds or more (default 30)."]),
    (22, "soon", ["h: ray_firewall_confirm_timeout=soon leaves the controller too little time to confirm new rules "
                  "before they are put back. Fix: set it to 10 seconds or more (default 30)."]),
])
def test_confirm_problems(port, seconds, expected):
    assert confirm_problems("h", port, seconds) == expected


@pytest.mark.parametrize(("rolled_back", "start"), [
    (True, "spark-1: the firewall would cut Ansible off: with the new rules in force, a new connection from the "
           "controller to 198.18.0.180:22 failed (Timeout when waiting for 198.18.0.180:22). The node put back the "
           "rules it had before (after ray_firewall_confirm_timeout=30 s)"),
    (False, "spark-1: the firewall would cut Ansible off (a new connection from the controller to 198.18.0.180:22: "
            "Timeout when waiting for 198.18.0.180:22) and the rules it had before were not put back within 30 s. Fix: on "
            "the console, `nft delete table inet t`"),
])
def test_confirm_message(rolled_back, start):
    message = confirm_message("spark-1", "198.18.0.180", 22, "Timeout when waiting for 198.18.0.180:22", 30, rolled_back, "t")
    assert message.startswith(start), message


def test_confirm_message_without_an_error_says_no_answer():
    assert "failed (no answer)" in confirm_message("h", "a", 22, "", 30, True, "t")


def test_confirm_message_names_ansibles_reconnection_when_that_failed():
    assert ("with the new rules in force, Ansible's new connection to the node failed (timed out)"
            in confirm_message("h", "a", 22, "timed out", 30, True, "t", by_reconnection=True))


@pytest.mark.parametrize(
    ("nft", "answer", "expected"),
    [
        # loaded: the rules, as guarded_load.yml keeps them to put back
        ("/usr/sbin/nft", (0, "table inet vllm_cluster {\n\tset management_ports {", ""),
         {"rc": 0, "stdout": "table inet vllm_cluster {\n\tset management_ports {", "stderr": ""}),
        # gone (a reboot without the unit, `nft flush ruleset`): nft's own error
        ("/usr/sbin/nft", (1, "", "Error: No such file or directory"),
         {"rc": 1, "stdout": "", "stderr": "Error: No such file or directory"}),
        # no nft yet (the role installs it after the read): not asked
        (None, None, {"rc": 127, "stdout": "", "stderr": "nft: command not found"}),
    ],
    ids=["loaded", "gone", "no-nft"],
)
def test_table_in_force_answers_as_the_command_module_registers(nft, answer, expected):
    asked = []

    def run_command(argv):
        asked.append(argv)
        return answer

    assert _firewall.table_in_force(run_command, nft, "inet vllm_cluster") == expected
    assert asked == ([[nft, "list", "table", "inet", "vllm_cluster"]] if nft else [])


@pytest.mark.parametrize("spec", ["vllm_cluster", "inet", "inet vllm cluster", "inet; reboot", "inet $(reboot)",
                                  "ether vllm_cluster", "inet -f/etc/shadow", ""])
def test_a_spec_that_names_no_table_is_refused_before_nft_runs(spec):
    def run_command(argv):
        raise AssertionError(f"nft ran with {argv}")

    with pytest.raises(ValueError, match="names no nftables table"):
        _firewall.table_in_force(run_command, "/usr/sbin/nft", spec)


GOOD = {"table": "inferops_vllm_cluster_ray", "enabled": True, "allowed_cidrs": ["198.51.100.7/32", "2001:db8::/64",
                                                                                 "198.51.100.7", "198.51.100.0/24",
                                                                                 "0.0.0.0/0"],
        "persist": True, "service_mgr": "systemd", "rules_file": "/etc/inferops-vllm-cluster/ray-firewall.nft",
        "admitted_problems": [], "confirm_port": 22, "confirm_timeout": 30}


@pytest.mark.parametrize(("case", "changes", "expected"), [
    ("all good", {}, []),
    ("a table name nft would read as more", {"table": "x; flush ruleset"},
     ['spark-1: ray_firewall_table="x; flush ruleset" is not an nftables table name (a letter, then up to 63 letters, '
      "digits or _). Fix: set it to such a name (default inferops_vllm_cluster_ray)."]),
    ("off: only the name is checked", {"enabled": False, "table": "1table", "allowed_cidrs": ["nope"], "confirm_timeout": 1},
     ['spark-1: ray_firewall_table="1table" is not an nftables table name (a letter, then up to 63 letters, digits or '
      "_). Fix: set it to such a name (default inferops_vllm_cluster_ray)."]),
    ("sources that are no network", {"allowed_cidrs": ["198.18.2.0/33", "10.0.0.0/8; accept", 7, "198.51.100.0/24"]},
     ["spark-1: ray_firewall_allowed_cidrs has 198.18.2.0/33, 10.0.0.0/8; accept, 7, not a network in CIDR notation. "
      "Fix: list networks such as 198.51.100.7/32 or 2001:db8::/64."]),
    # what nft would read otherwise than Python: host bits (cleared by nft: a whole /24 admitted), a prefix with a
    # leading zero (octal to nft: /010 is /8, /08 was /0 to older nft), a zone, a netmask, a trailing newline
    ("sources nft would read wider or otherwise",
     {"allowed_cidrs": ["198.51.100.7/24", "2001:db8::1/64", "10.0.0.0/010", "10.0.0.0/08", "fe80::1%eth0",
                        "10.0.0.0/255.0.0.0", "198.51.100.7\n"]},
     ["spark-1: ray_firewall_allowed_cidrs has 198.51.100.7/24, 2001:db8::1/64, 10.0.0.0/010, 10.0.0.0/08, fe80::1%eth0, "
      "10.0.0.0/255.0.0.0, 198.51.100.7\n, not a network in CIDR notation. Fix: list networks such as 198.51.100.7/32 "
      "or 2001:db8::/64."]),
    ("one source given as a string, not a list", {"allowed_cidrs": "10.0.0.0/08"},
     ["spark-1: ray_firewall_allowed_cidrs has 10.0.0.0/08, not a network in CIDR notation. Fix: list networks such as "
      "198.51.100.7/32 or 2001:db8::/64."]),
    ("a table name with a trailing newline", {"table": "inferops\n"},
     ['spark-1: ray_firewall_table="inferops\\n" is not an nftables table name (a letter, then up to 63 letters, '
      "digits or _). Fix: set it to such a name (default inferops_vllm_cluster_ray)."]),
    ("a boot unit without systemd", {"service_mgr": "tini"},
     ["spark-1: ray_firewall_persist=true needs systemd as the service manager (this host runs tini). Fix: set "
      "ray_firewall_persist=false and load /etc/inferops-vllm-cluster/ray-firewall.nft at boot your own way, or re-run "
      "site.yml after each boot."]),
    ("no boot unit, no systemd needed", {"persist": False, "service_mgr": ""}, []),
    ("every problem at once, in order", {"table": "", "service_mgr": "", "admitted_problems": ["ports!"],
                                         "confirm_timeout": 3},
     ['spark-1: ray_firewall_table="" is not an nftables table name (a letter, then up to 63 letters, digits or _). '
      "Fix: set it to such a name (default inferops_vllm_cluster_ray).",
      "spark-1: ray_firewall_persist=true needs systemd as the service manager (this host runs an unknown one). Fix: "
      "set ray_firewall_persist=false and load /etc/inferops-vllm-cluster/ray-firewall.nft at boot your own way, or "
      "re-run site.yml after each boot.",
      "ports!",
      "spark-1: ray_firewall_confirm_timeout=3 leaves the controller too little time to confirm new rules before they "
      "are put back. Fix: set it to 10 seconds or more (default 30)."]),
], ids=lambda value: value if isinstance(value, str) else "")
def test_settings_problems(case, changes, expected):
    assert _firewall.settings_problems("spark-1", dict(GOOD, **changes)) == expected
