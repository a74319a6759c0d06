# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the cluster's firewall admits from outside the interconnect, and what it says when it had to roll back.

Measured in the lab (#32): Ray's GCS, raylets and agents, vLLM's engine and its ranks, Gloo and torch's TCP store
listen on every interface or on ephemeral ports, and Linux answers for the interconnect address on the management
port too (the weak host model: 29 of 30 listening ports answered there). Binding to the interconnect protects
nothing and no fixed port list is complete, so the policy is by network: everything from loopback and the
interconnect network, replies to what the node opened, and from elsewhere only new TCP connections to the ports named
here (Ansible's SSH, vLLM's API on the node that serves it, the operator's own) or from the operator's
networks. Other protocols pass (DHCP, NTP, ICMP, neighbour discovery): the cluster listens on TCP only.
Private to the collection.
"""

from __future__ import annotations

import json
import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import written_network
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports import tcp_port

MESSAGES = {
    "table_name": "{host}: ray_firewall_table={value} is not an nftables table name (a letter, then up to 63 letters, "
                  "digits or _). Fix: set it to such a name (default inferops_vllm_cluster_ray).",
    "sources": "{host}: ray_firewall_allowed_cidrs has {invalid}, not a network in CIDR notation. Fix: list networks "
               "such as 198.51.100.7/32 or 2001:db8::/64.",
    "persist": "{host}: ray_firewall_persist=true needs systemd as the service manager (this host runs {manager}). "
               "Fix: set ray_firewall_persist=false and load {rules_file} at boot your own way, or re-run site.yml "
               "after each boot.",
    "port": "{host}: {variable}={value} is not a TCP port (1-65535). Fix: set it to the port number.",
    "confirm_port": "{host}: ray_firewall_confirm_port={value} is not a TCP port (1-65535, or 0 to rely on Ansible's "
                    "reconnection alone). Fix: set it to the port the controller reaches the node on.",
    "confirm_timeout": "{host}: ray_firewall_confirm_timeout={value} leaves the controller too little time to confirm "
                       "new rules before they are put back. Fix: set it to 10 seconds or more (default 30).",
    "rolled_back": "{host}: the firewall would cut Ansible off: with the new rules in force, {attempt} failed "
                   "({error}). The node put back the rules it had before "
                   "(after ray_firewall_confirm_timeout={seconds} s) and nothing else changed. Fix: admit that port "
                   "(ray_firewall_ssh_port, ray_firewall_management_ports) or the controller's network "
                   "(ray_firewall_allowed_cidrs); behind a jump host set ray_firewall_confirm_port to the port "
                   "the controller reaches, or 0 to rely on Ansible's reconnection alone.",
    "table": "node_state: nft_tables entry {spec!r} names no nftables table: it takes the family and the table's name, "
             "e.g. 'inet inferops_vllm_cluster_ray'.",
    "stuck": "{host}: the firewall would cut Ansible off ({attempt}: {error}) and the rules it had before were "
             "not put back within {seconds} s. Fix: on the console, `nft delete table inet {table}`, then correct "
             "the ports as above.",
    "CONFIRM_UNREACHABLE": "NOTE {host}: the controller cannot open a connection to {address} even before the change "
                           "({error}; a jump host?), so only Ansible's own reconnection confirms the new rules. Set "
                           "ray_firewall_confirm_port (0 to say so).",
}


def admitted_ports(host: str, ports: t.Mapping[str, t.Any], extra: t.Iterable[t.Any] = (),
                   required: t.Iterable[str] = ()) -> dict[str, t.Any]:
    """The TCP ports new connections may reach from outside the interconnect: each named port (variable ->
    value; None or '' leaves it out, unless `required` names it) and the operator's extra ones. `problems` names
    every value that is no port."""
    admitted: set[int] = set()
    problems = []
    named = [(variable, value) for variable, value in ports.items() if value not in (None, "") or variable in required]
    named += [("ray_firewall_management_ports", value) for value in extra]
    for variable, value in named:
        port = tcp_port(value)
        if port is None:
            problems.append(MESSAGES["port"].format(host=host, variable=variable, value=value))
        else:
            admitted.add(port)
    return {"ports": sorted(admitted), "problems": problems}


def confirm_problems(host: str, port: t.Any, seconds: t.Any) -> list[str]:
    """The confirmation's settings that cannot work: a probe port that is no port (0 turns the probe off), a guard
    that would put the rules back before the controller could confirm them (under 10 s)."""
    problems = []
    if str(port).strip() != "0" and tcp_port(port) is None:
        problems.append(MESSAGES["confirm_port"].format(host=host, value=port))
    try:
        enough = int(str(seconds).strip()) >= 10
    except ValueError:
        enough = False
    if not enough:
        problems.append(MESSAGES["confirm_timeout"].format(host=host, value=seconds))
    return problems


# The name goes verbatim into an nftables file loaded as root (and into `nft delete table`).
TABLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def settings_problems(host: str, settings: t.Mapping[str, t.Any]) -> list[str]:
    """The firewall's settings that cannot work, every one at once, before anything changes: the table's name
    (always: the rules are removed by it too) and, with the firewall on, the operator's sources, the boot unit
    without systemd, the ports that are no ports (settings["admitted_problems"], from admitted_ports) and the
    confirmation's settings."""
    table = settings.get("table")
    problems = [] if isinstance(table, str) and TABLE_NAME.fullmatch(table) else [
        MESSAGES["table_name"].format(host=host, value=json.dumps(str(table)))]
    if not settings.get("enabled"):
        return problems
    sources = settings.get("allowed_cidrs") or []
    # one source given as a string, not a list: judged as one, not letter by letter
    sources = [sources] if isinstance(sources, str) else sources
    invalid = [str(source) for source in sources if written_network(source) is None]
    if invalid:
        problems.append(MESSAGES["sources"].format(host=host, invalid=", ".join(invalid)))
    if settings.get("persist") and settings.get("service_mgr") != "systemd":
        problems.append(MESSAGES["persist"].format(host=host, manager=settings.get("service_mgr") or "an unknown one",
                                                   rules_file=settings.get("rules_file")))
    problems += list(settings.get("admitted_problems") or [])
    return problems + confirm_problems(host, settings.get("confirm_port"), settings.get("confirm_timeout"))


def confirm_message(host: str, address: str, port: t.Any, error: str, seconds: t.Any, rolled_back: bool,
                    table: str, by_reconnection: bool = False) -> str:
    """What the play says when the controller could not reach the node again after the rules changed: through its
    own probe, or (`by_reconnection`) through Ansible's reconnection."""
    key = "rolled_back" if rolled_back else "stuck"
    attempt = ("Ansible's new connection to the node" if by_reconnection
               else f"a new connection from the controller to {address}:{port}")
    return MESSAGES[key].format(host=host, attempt=attempt, error=error or "no answer", seconds=seconds, table=table)


# nft's address families (a table's name: TABLE_NAME)
TABLE_FAMILIES = ("inet", "ip", "ip6", "arp", "bridge", "netdev")
# what a shell answers for a command it cannot find
NOT_FOUND = 127


def table_in_force(run_command: t.Callable[..., t.Any], nft: str | None, spec: str) -> dict[str, t.Any]:
    """The table spec ('<family> <name>') names, as `nft list table` shows it in force, in the shape the command
    module registers (rc, stdout, stderr): rc 0 with its rules where the table is loaded, nft's own error where it
    is not (a reboot without the boot unit, `nft flush ruleset`), NOT_FOUND where the node has no nft. ValueError
    for a spec that names no table (it goes to nft as arguments, never through a shell)."""
    words = str(spec).split()
    if len(words) != 2 or words[0] not in TABLE_FAMILIES or not TABLE_NAME.fullmatch(words[1]):
        raise ValueError(MESSAGES["table"].format(spec=spec))
    if not nft:
        return {"rc": NOT_FOUND, "stdout": "", "stderr": "nft: command not found"}
    rc, out, err = run_command([nft, "list", "table"] + words)
    return {"rc": rc, "stdout": out, "stderr": err}
