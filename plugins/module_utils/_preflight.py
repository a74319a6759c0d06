# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Preflight's decisions about the wiring an inventory describes, before anything changes on a host:
the interconnect address and interface (F5, F7), addresses shared between hosts (F8), MTU (F12), ports and
parallelism (F9). Each returns sentences (empty when all is well).

`CHECKS` is the table preflight runs (filter `preflight_problems`): a check is a function registered with
`@check`, taking one node (scope "node", run on every host) or every node (scope "cluster", run once by the
preflight role; "warning", printed once by it without failing; "serving", run once by vllm_server's preflight)
and the settings, returning sentences.
Adding a check: the function here, its sentence in `MESSAGES`, its rows in
tests/unit/plugins/module_utils/test__preflight.py (and its section in docs/troubleshooting.md).
Private to the collection."""

from __future__ import annotations

import ipaddress
import json
import re
import typing as t
from dataclasses import dataclass

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends, _ports
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import master_problems, split_problems
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import in_cidr, interconnect_candidates

MESSAGES = {
    "F5_COVERS": "[F5] {host}: vllm_cluster_interconnect_cidr={cidr} also covers its management address {covered}; "
                 "Ray could register it and the firewall would admit the management network. Fix: narrow the CIDR to "
                 "the interconnect's own subnet{example}.",
    "F5_NONE": "[F5] {host}: no address inside the interconnect {cidr} on any interface (this host has {addresses}). "
               "Ray would hang retrying the GCS. Fix: bring up the interconnect port with its address, or correct "
               "vllm_cluster_interconnect_cidr.",
    "F5_AMBIGUOUS": "[F5] {host}: {count} addresses inside the interconnect {cidr} ({found}); expected exactly one. "
                    "Fix: set vllm_cluster_node_ip in host_vars/{host} to the address Ray and NCCL must use.",
    "F5_OUTSIDE": "[F5] {host}: vllm_cluster_node_ip={ip} lies outside the interconnect {cidr}; every layer would be "
                  "pinned to the wrong network. Fix: set it to this host's address inside {cidr} or remove it to "
                  "derive it.",
    "F5_UNASSIGNED": "[F5] {host}: vllm_cluster_node_ip={ip} is not assigned on any interface (interconnect addresses "
                     "here: {found}). `ray start --node-ip-address` would hang retrying the GCS. Fix: assign the "
                     "address to the interconnect port or correct vllm_cluster_node_ip in host_vars/{host}.",
    "F7": "[F7] {host}: interface {interface} {what} (interfaces: {interfaces}; {ip} is on {ip_on}). "
          "NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME would name the wrong NIC. Fix: remove "
          "vllm_cluster_interconnect_interface from host_vars/{host} to derive it from the CIDR, or correct it.",
    "F8": "[F8] {shared}: the same interconnect address on several hosts; Ray and vLLM need a unique IP per node "
          "(\"Every node should have a unique IP address\"). Fix: give each host its own address in {cidr} "
          "(check vllm_cluster_node_ip in host_vars).",
    "F12": "[F12] interconnect MTU differs between nodes: {mtus}; large NCCL/Gloo messages stall on the smaller one. "
           "Fix: set the same MTU on every node's interconnect port (9000 on a ConnectX-7 RoCE link), or set "
           "vllm_cluster_mtu_mismatch=warn to proceed.",
    "F9": "[F9] cluster: vllm_server_tensor_parallel_size {tp} x vllm_server_pipeline_parallel_size {pp} = {world} "
          "GPUs, but the inventory has {nodes} nodes x {per_node} GPUs = {gpus}; vLLM would fail with 'TP ({tp}) "
          "exceeds available GPUs'. Fix: lower the parallel sizes or add nodes/GPUs.",
    "PORTS": "{host}: {problems} Fix: give each a free port of its own in 1-65535, outside the workers' range.",
    "MODEL_EMPTY": "vllm_server_model is empty: vLLM would have nothing to serve. Fix: set it in group_vars to a "
                   "Hugging Face model id (e.g. Qwen/Qwen3.5-122B-A10B-FP8) or a path inside the container.",
    "SEE": "{message} See {guide}#{anchor}",
}


def _covered(default: t.Mapping[str, t.Any], cidr: str, node_ip: str, ansible_host: str) -> list[str]:
    """The management addresses a CIDR wrongly covers: the default route's, and an IP ansible_host (in_cidr
    refuses a hostname)."""
    covered = []
    address = default.get("address") or ""
    if address and in_cidr(address, cidr):
        covered.append(f"{address} (default route, {default.get('interface') or '?'})")
    if ansible_host and ansible_host not in (address, node_ip) and in_cidr(ansible_host, cidr):
        covered.append(f"ansible_host {ansible_host}")
    return covered


def wiring_problems(facts: t.Mapping[str, t.Any], cidr: str, node_ip: str, interface: str, configured: bool,
                    ansible_host: str, host: str) -> list[str]:
    """F5 and F7 for one host: its interconnect address (derived or configured) and interface, against its facts."""
    candidates = interconnect_candidates(facts, cidr)
    addresses = [c["address"] for c in candidates]
    problems = []
    default = facts.get("default_ipv4") or {}
    covered = _covered(default, cidr, node_ip, ansible_host or "")
    if covered:
        others = [a for a in addresses if a != default.get("address")]
        example = f" (e.g. {ipaddress.ip_network(others[0] + '/24', strict=False)})" if others else ""
        problems.append(MESSAGES["F5_COVERS"].format(host=host, cidr=cidr, covered=" and ".join(covered), example=example))
    if not configured and not candidates:
        problems.append(MESSAGES["F5_NONE"].format(
            host=host, cidr=cidr, addresses=", ".join(facts.get("all_ipv4_addresses") or []) or "no IPv4 address"))
    if not configured and len(candidates) > 1:
        found = ", ".join(f"{c['address']} on {c['interface']}" for c in candidates)
        problems.append(MESSAGES["F5_AMBIGUOUS"].format(host=host, count=len(candidates), cidr=cidr, found=found))
    if configured and not in_cidr(node_ip, cidr):
        problems.append(MESSAGES["F5_OUTSIDE"].format(host=host, ip=node_ip, cidr=cidr))
    if configured and node_ip not in addresses:
        problems.append(MESSAGES["F5_UNASSIGNED"].format(host=host, ip=node_ip, found=", ".join(addresses) or "none"))
    if node_ip:
        interfaces = facts.get("interfaces") or []
        on_it = [c for c in candidates if c["interface"] == interface and c["address"] == node_ip]
        if interface not in interfaces or len(on_it) != 1:
            ip_on = next((c["interface"] for c in candidates if c["address"] == node_ip), "no interface")
            problems.append(MESSAGES["F7"].format(
                host=host, interface=json.dumps(interface),
                what="does not exist" if interface not in interfaces else f"does not carry {node_ip}",
                interfaces=", ".join(sorted(interfaces)), ip=node_ip, ip_on=ip_on))
    return problems


def shared_addresses(node_ips: t.Mapping[str, str], cidr: str) -> str:
    """F8 over the whole cluster (host -> interconnect address): one sentence naming every shared address, or ''."""
    by_ip: dict[str, list[str]] = {}
    for host, ip in node_ips.items():
        if ip:
            by_ip.setdefault(str(ip), []).append(str(host))
    shared = "; ".join(f"{ip} on {' and '.join(sorted(hosts))}" for ip, hosts in sorted(by_ip.items()) if len(hosts) > 1)
    return MESSAGES["F8"].format(shared=shared, cidr=cidr) if shared else ""


def mtu_mismatch(rows: t.Sequence[t.Sequence[t.Any]]) -> str:
    """F12 over the whole cluster ([host, interface, mtu] rows, in inventory order): one sentence, or '' when equal."""
    rows = [list(row) for row in rows]
    if len({str(row[2]) for row in rows}) <= 1:
        return ""
    return MESSAGES["F12"].format(mtus=", ".join(" ".join(str(v) for v in row) for row in rows))


def parallelism_problem(tp: t.Any, pp: t.Any, nodes: int, per_node: t.Any) -> str:
    """F9: tensor x pipeline parallelism against the inventory's GPUs; '' when it fits."""
    world, gpus = int(tp) * int(pp), int(nodes) * int(per_node)
    if world <= gpus:
        return ""
    return MESSAGES["F9"].format(tp=int(tp), pp=int(pp), world=world, nodes=int(nodes), per_node=int(per_node), gpus=gpus)


# The table preflight runs.

@dataclass(frozen=True)
class Node:
    """What preflight knows of one host before anything changes on it (from its facts and derived variables)."""
    host: str
    facts: t.Mapping[str, t.Any]
    node_ip: str
    interface: str
    pinned: bool
    mtu: t.Any
    ansible_host: str


@dataclass(frozen=True)
class Check:
    function: t.Callable[..., list[str]]
    # "node": function(node, settings), on every host; "cluster" (preflight's own), "warning" (printed by
    # preflight, not fatal) and "serving" (vllm_server's preflight): function(nodes, settings), once over every host
    scope: str


CHECKS: list[Check] = []
SCOPES = ("node", "cluster", "warning", "serving")


def check(scope: str) -> t.Callable[[t.Callable[..., list[str]]], t.Callable[..., list[str]]]:
    """Registers a check in CHECKS, in the order preflight reports them."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}: expected one of {', '.join(SCOPES)}")

    def register(function: t.Callable[..., list[str]]) -> t.Callable[..., list[str]]:
        CHECKS.append(Check(function, scope))
        return function
    return register


def node_of(host: str, hostvars: t.Mapping[str, t.Any]) -> Node:
    """One host's Node from its hostvars (the facts vllm_cluster derived for it)."""
    variables = hostvars[host]

    def get(name: str, default: t.Any = "") -> t.Any:
        try:
            value = variables[name]
        except KeyError:
            return default
        return default if value is None else value
    return Node(host=str(host), facts=get("ansible_facts", {}), node_ip=str(get("vllm_cluster_node_ip")),
                interface=str(get("vllm_cluster_interconnect_interface")),
                pinned=_true(get("vllm_cluster_node_ip_pinned", False)),
                mtu=get("vllm_cluster_interconnect_mtu"), ansible_host=str(get("ansible_host")))


def preflight_problems(hosts: t.Sequence[str], hostvars: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any],
                       scope: str) -> list[str]:
    """Runs every check of `scope` in CHECKS over `hosts` (each host for "node", all of them otherwise). A
    sentence tagged [F<n>] ends with the link to that section of the guide (settings["guide"])."""
    nodes = [node_of(host, hostvars) for host in hosts]
    problems = []
    for registered in (c for c in CHECKS if c.scope == scope):
        problems += ([p for node in nodes for p in registered.function(node, settings)] if scope == "node"
                     else registered.function(nodes, settings))
    return [_linked(p, settings["guide"]) for p in problems]


def _linked(problem: str, guide: str) -> str:
    tag = re.match(r"\[F(\d+)\]", problem)
    return MESSAGES["SEE"].format(message=problem, guide=guide, anchor=f"f{tag.group(1)}") if tag else problem


@check("node")
def node_wiring(node: Node, settings: t.Mapping[str, t.Any]) -> list[str]:
    return wiring_problems(node.facts, settings["cidr"], node.node_ip, node.interface, node.pinned, node.ansible_host,
                           node.host)


@check("node")
def node_ports(node: Node, settings: t.Mapping[str, t.Any]) -> list[str]:
    # The port registry's checks (module_utils/_ports.py) on the ports this backend opens.
    problems = _ports.problems(settings["ports"], _backends.traits(str(settings.get("backend") or "ray")),
                               _true(settings.get("weights_staged", False)))
    return [MESSAGES["PORTS"].format(host=node.host, problems=" ".join(problems))] if problems else []


@check("cluster")
def cluster_shared_addresses(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any]) -> list[str]:
    shared = shared_addresses({node.host: node.node_ip for node in nodes}, settings["cidr"])
    return [shared] if shared else []


def _mtu(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any], mode: str) -> list[str]:
    mismatch = mtu_mismatch([[node.host, node.interface, node.mtu] for node in nodes])
    return [mismatch] if mismatch and settings["mtu_mismatch"] == mode else []


@check("cluster")
def cluster_mtu(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any]) -> list[str]:
    return _mtu(nodes, settings, "fail")


@check("warning")
def cluster_mtu_warning(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any]) -> list[str]:
    return _mtu(nodes, settings, "warn")


@check("serving")
def serving_model(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any]) -> list[str]:
    return [MESSAGES["MODEL_EMPTY"]] if not str(settings["model"] or "").strip() else []


@check("serving")
def serving_parallelism(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any]) -> list[str]:
    problem = parallelism_problem(settings["tensor_parallel_size"], settings["pipeline_parallel_size"], len(nodes),
                                  settings["gpus_per_node"])
    if problem:
        return [problem]
    # vLLM's own launcher also splits the ranks evenly between the nodes (Ray places them where GPUs are free).
    if _backend(settings).ranks_on == "every_node":
        return split_problems(settings["tensor_parallel_size"], settings["pipeline_parallel_size"], len(nodes),
                              settings["gpus_per_node"])
    return []


@check("cluster")
def cluster_mp_master(nodes: t.Sequence[Node], settings: t.Mapping[str, t.Any]) -> list[str]:
    """F19 from the inventory: under a backend with a rendezvous (mp) the ranks meet at the head's interconnect
    address."""
    if not _backend(settings).rendezvous or not _true(settings.get("mp_master_check", True)):
        return []
    head = next((node for node in nodes if node.host == settings.get("head")), None)
    if head is None:
        return []
    return master_problems(head.host, settings["mp_master_address"], head.node_ip, head.interface, settings["cidr"])


def _backend(settings: t.Mapping[str, t.Any]) -> _backends.Backend:
    return _backends.backend(str(settings.get("backend") or "ray"))


def _true(value: t.Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes", "on")
