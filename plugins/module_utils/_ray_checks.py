# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ray_cluster_check concludes from Ray's own view of the cluster.

Pure functions over the data ray.nodes() and the dry-runs return, so every verdict and every
message is unit-tested without a cluster. Private to the collection.
"""

from __future__ import annotations

import dataclasses
import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._network import in_cidr

# One template per check; docs/troubleshooting.md quotes them and a test keeps both in step.
MESSAGES: dict[str, str] = {
    "F1": (
        "[F1] {host}: the Ray head registered {address}, outside the interconnect {cidr} (Ray took the "
        "default route's address). Workers reaching it only over the interconnect will hang, and vLLM's "
        "placement group will wait forever for node:{expected}. Fix: start the head with "
        "--node-ip-address={expected} (the ray_head role does; re-run site.yml) and set VLLM_HOST_IP={expected}. "
        "See {doc}#f1"
    ),
    "F4": (
        "[F4] {host}: a Ray worker registered {address}, outside the interconnect {cidr}. It shows Alive but "
        "cross-node objects and collectives will time out. Fix: start it with --address=<head interconnect ip>:<port> "
        "--node-ip-address={expected} (the ray_worker role does; re-run site.yml). See {doc}#f4"
    ),
    "F2": (
        "[F2] {host}: Ray knows this node as node:{address} but its VLLM_HOST_IP is {expected}; vLLM's placement "
        "group asks for node:{expected} and fails with 'No available node types can fulfill resource request'. "
        "Fix: make --node-ip-address and VLLM_HOST_IP the same interconnect address (re-run site.yml; check "
        "vllm_cluster_node_ip in host_vars/{host}). See {doc}#f2"
    ),
    "F6": (
        "[F6] {host}: cannot open TCP to the Ray head's GCS at {head_ip}:{port} (head {head}) from its interconnect "
        "{interface} ({ip}) within {timeout} s; `ray start` would retry forever. Fix: check the link (`ping -I "
        "{interface} {head_ip}`), that firewalls admit TCP {port} from {cidr}, and that the head container runs. "
        "See {doc}#f6"
    ),
    "F14": (
        "[F14] {host}: expected in the cluster at {expected} but no alive Ray node has that address after "
        "{timeout} s ({alive} of {expected_nodes} nodes alive). Fix: look at `docker logs` of the Ray container "
        "on {host}, then re-run site.yml --tags ray_worker --limit {host}. See {doc}#f14"
    ),
    "F14_COUNT": (
        "[F14] cluster: {alive} of {expected_nodes} expected Ray nodes alive after {timeout} s "
        "(alive: {alive_addresses}). Fix: start the missing nodes (site.yml --tags ray). See {doc}#f14"
    ),
    "F14_GPU": (
        "[F14] cluster: Ray sees {gpus} GPUs on alive nodes, expected at least {expected_gpus}. Fix: check "
        "vllm_cluster_gpus_per_node and that every node's container got its GPU (docker_runtime's GPU probe). "
        "See {doc}#f14"
    ),
    "F8_RAY": (
        "[F8] {host}: {count} alive Ray nodes registered {address} after {timeout} s (ids {node_ids}). Usually "
        "the raylet of a node restarted without a clean stop, which Ray has not yet declared dead; otherwise two "
        "hosts share the address. vLLM needs one node per address ('Every node should have a unique IP address') "
        "and its workers could be placed on the stale one. Fix: re-run site.yml --tags validate; if this persists, "
        "restart {host}'s Ray container (site.yml --tags ray --limit {host} -e vllm_cluster_restart=true) or give "
        "each host its own vllm_cluster_node_ip. See {doc}#f8"
    ),
    "F22": (
        "[F22] {address}: an alive Ray node that is not in the inventory (hostname {hostname}, id {node_id}) is part "
        "of the cluster; its {gpus} GPUs are not counted, yet vLLM could place a rank on it. Fix: stop Ray on that "
        "machine (docker stop of its Ray container) or add it to the inventory under ray_workers; "
        "cluster_validate_unknown_nodes=warn only reports it. See {doc}#f22"
    ),
    "F15": (
        "[F15] {host}: the Ray node at {address} (id {node_id}) is dead and no alive node replaced it. "
        "Fix: look at `docker logs` of the Ray container on {host} and restart it "
        "(site.yml --tags ray_worker --limit {host} -e vllm_cluster_restart=true). See {doc}#f15"
    ),
    "F9": (
        "[F9] cluster: tensor_parallel_size {tp} x pipeline_parallel_size {pp} = {world} GPUs, but Ray sees "
        "{gpus} on alive nodes; vLLM would fail with 'TP ({tp}) exceeds available GPUs'. Fix: lower "
        "vllm_server_tensor_parallel_size/pipeline_parallel_size or bring the missing GPUs/nodes up. See {doc}#f9"
    ),
    "F2_PLACEMENT": (
        "[F2] {host}: the placement group vLLM will request ({bundles} bundles of 1 GPU, bundle 0 pinned to "
        "node:{driver_ip}) was not placed within {timeout} s ({detail}). Ray's scheduler cannot satisfy vLLM; "
        "vLLM would wait forever. Fix: check that the head registered {driver_ip} (its VLLM_HOST_IP) and that "
        "enough GPUs are free. See {doc}#f2"
    ),
    "F3": (
        "[F3] {host}: could not open TCP from its Ray node {address} to the head's VLLM_HOST_IP "
        "{driver_ip}:{port} (an ephemeral port, as torch c10d's TCPStore uses): {detail}. "
        "Fix: allow TCP between interconnect addresses on all ports (firewall), and check the head's "
        "VLLM_HOST_IP. See {doc}#f3"
    ),
    "F4_TRANSFER": (
        "[F4] {host}: Ray could not run a task carrying a 2 MB object on its node {address} within {timeout} s "
        "({detail}): the node stopped answering (its Ray container died or hangs) or object transfer to it is "
        "broken, typically a node registered with an address the others cannot reach. Fix: look at `docker logs` "
        "of the Ray container on {host}; pin every node to the interconnect (re-run site.yml). See {doc}#f4"
    ),
    "F20_RANK": (
        "[F20] {host}: vLLM's rank {rank} on {address} died (pid {pid}: {cause}), and {server}. Every request "
        "needs every rank: completions hang or fail while /health may still answer 200 (or the server exits). "
        "Fix: restart vLLM's ranks together (site.yml --tags vllm -e vllm_cluster_restart=true); if the rank dies "
        "again, read `docker logs` of the Ray container on {host}. See {doc}#f20"
    ),
    "F20_COUNT": (
        "[F20] cluster: vLLM runs with {alive} of its {expected} ranks alive after {timeout} s ({ranks}). Fix: "
        "restart vLLM's ranks together (site.yml --tags vllm -e vllm_cluster_restart=true) and read `docker logs` of "
        "the vLLM container on the head. See {doc}#f20"
    ),
    "F20_EXITED": (
        "[F20] {host}: {server}, while the Ray cluster under it kept running: clients get no answer. Fix: read "
        "`docker logs {container}` on {host}, then restart vLLM's ranks together (site.yml --tags vllm -e "
        "vllm_cluster_restart=true). See {doc}#f20"
    ),
}


@dataclasses.dataclass(frozen=True)
class Node:
    node_id: str
    address: str
    hostname: str
    alive: bool
    head: bool
    resources: dict[str, float]
    host: str | None = None

    @property
    def gpus(self) -> float:
        return float(self.resources.get("GPU", 0) or 0)

    @property
    def node_resource_ips(self) -> list[str]:
        return sorted(k[len("node:"):] for k in self.resources if k.startswith("node:") and k != "node:__internal_head__")

    def as_dict(self) -> dict[str, t.Any]:
        return {
            "node_id": self.node_id,
            "address": self.address,
            "hostname": self.hostname,
            "host": self.host,
            "alive": self.alive,
            "head": self.head,
            "gpus": self.gpus,
            "resources": dict(self.resources),
        }


@dataclasses.dataclass(frozen=True)
class Violation:
    check: str
    host: str
    address: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


def _message(key: str, **values: t.Any) -> str:
    return MESSAGES[key].format(doc=TROUBLESHOOTING, **values)


def gcs_unreachable(host: str, head: str, head_ip: str, port: t.Any, interface: str, ip: str, timeout: t.Any,
                    cidr: str) -> str:
    """F6: a worker that could not open TCP to the head's GCS (ray_worker, before `ray start`, which would retry
    forever)."""
    return _message("F6", host=host, head=head, head_ip=head_ip, port=port, interface=interface, ip=ip,
                    timeout=timeout, cidr=cidr)


def resolve_host(address: str, hostname: str, expected_node_ips: t.Mapping[str, str]) -> str | None:
    """The inventory host behind a Ray node: by its address first, then by its host name.

    A node registered with the wrong (management) address is still named after the inventory host,
    because lab and Spark alike run Ray with the host network, so the node's hostname is the host's.
    """
    for host, ip in expected_node_ips.items():
        if ip == address:
            return host
    short = (hostname or "").split(".")[0]
    for host in expected_node_ips:
        if host == hostname or host.split(".")[0] == short:
            return host
    return None


def parse_nodes(raw_nodes: t.Iterable[t.Mapping[str, t.Any]], expected_node_ips: t.Mapping[str, str]) -> list[Node]:
    """Turn ray.nodes() entries into Nodes, each mapped to its inventory host when possible."""
    nodes = []
    for raw in raw_nodes:
        resources = {str(k): float(v) for k, v in (raw.get("Resources") or {}).items()}
        address = str(raw.get("NodeManagerAddress", ""))
        hostname = str(raw.get("NodeManagerHostname", ""))
        nodes.append(
            Node(
                node_id=str(raw.get("NodeID", "")),
                address=address,
                hostname=hostname,
                alive=bool(raw.get("Alive", False)),
                head="node:__internal_head__" in resources or bool(raw.get("IsHead", False)),
                resources=resources,
                host=resolve_host(address, hostname, expected_node_ips),
            )
        )
    return nodes


def alive(nodes: t.Iterable[Node]) -> list[Node]:
    return [n for n in nodes if n.alive]


def check_nodes(
    nodes: list[Node],
    cidr: str,
    expected_node_ips: t.Mapping[str, str],
    expected_nodes: int | None = None,
    expected_gpus: int | None = None,
    tensor_parallel_size: int | None = None,
    pipeline_parallel_size: int | None = None,
    timeout: int = 0,
    unknown_nodes: str = "fail",
) -> list[Violation]:
    """Every violation visible in the node table, in the order an operator should fix them.

    With unknown_nodes='warn', alive nodes outside the inventory (F22) are left to unknown_node_warnings().
    """
    violations: list[Violation] = []
    live = alive(nodes)
    if unknown_nodes == "fail":
        violations.extend(unknown_node_violations(nodes, cidr, expected_node_ips))

    def label(node: Node) -> str:
        return node.host or f"unknown node {node.hostname or node.node_id[:12]}"

    for node in live:
        expected = expected_node_ips.get(node.host or "", "") or "<its interconnect address>"
        if not in_cidr(node.address, cidr):
            key = "F1" if node.head else "F4"
            violations.append(
                Violation(key, label(node), node.address,
                          _message(key, host=label(node), address=node.address, cidr=cidr, expected=expected))
            )
            continue
        if node.host and node.host in expected_node_ips and expected_node_ips[node.host] != node.address:
            violations.append(
                Violation("F2", label(node), node.address,
                          _message("F2", host=label(node), address=node.address, expected=expected_node_ips[node.host]))
            )
        elif node.node_resource_ips and node.address not in node.node_resource_ips:
            violations.append(
                Violation("F2", label(node), node.address,
                          _message("F2", host=label(node), address=",".join(node.node_resource_ips), expected=node.address))
            )

    live_addresses = {n.address for n in live}
    live_hosts = {n.host for n in live if n.host}
    wanted = expected_nodes if expected_nodes is not None else (len(expected_node_ips) or None)
    missing_hosts = [h for h, ip in expected_node_ips.items() if ip not in live_addresses and h not in live_hosts]
    for host in missing_hosts:
        violations.append(
            Violation("F14", host, expected_node_ips[host],
                      _message("F14", host=host, expected=expected_node_ips[host], timeout=timeout,
                               alive=len(live), expected_nodes=wanted or len(expected_node_ips)))
        )
    if wanted and len(live) < wanted and not missing_hosts:
        violations.append(
            Violation("F14", "cluster", "",
                      _message("F14_COUNT", alive=len(live), expected_nodes=wanted, timeout=timeout,
                               alive_addresses=", ".join(sorted(live_addresses)) or "none"))
        )

    by_address: dict[str, list[Node]] = {}
    for node in live:
        by_address.setdefault(node.address, []).append(node)
    for address, sharing in sorted(by_address.items()):
        if len(sharing) > 1:
            violations.append(
                Violation("F8", label(sharing[0]), address,
                          _message("F8_RAY", host=label(sharing[0]), count=len(sharing), address=address,
                                   timeout=timeout, node_ids=", ".join(sorted(n.node_id[:12] for n in sharing))))
            )

    for node in nodes:
        if not node.alive and node.address not in live_addresses and (node.host is None or node.host not in live_hosts):
            violations.append(
                Violation("F15", label(node), node.address,
                          _message("F15", host=label(node), address=node.address, node_id=node.node_id[:12]))
            )

    # an unknown node's GPUs are nobody's to plan with (without an inventory view, every node counts)
    gpus = sum(n.gpus for n in live if n.host or not expected_node_ips)
    if expected_gpus and gpus < expected_gpus:
        violations.append(
            Violation("F14", "cluster", "", _message("F14_GPU", gpus=_num(gpus), expected_gpus=expected_gpus))
        )
    if tensor_parallel_size:
        pp = pipeline_parallel_size or 1
        world = tensor_parallel_size * pp
        if world > gpus:
            violations.append(
                Violation("F9", "cluster", "",
                          _message("F9", tp=tensor_parallel_size, pp=pp, world=world, gpus=_num(gpus)))
            )
    return violations


def unknown_node_violations(nodes: list[Node], cidr: str, expected_node_ips: t.Mapping[str, str]) -> list[Violation]:
    """F22: alive nodes in the interconnect that no inventory host accounts for (outside it, F1/F4 speak)."""
    if not expected_node_ips:
        return []
    return [
        Violation("F22", node.address, node.address,
                  _message("F22", address=node.address, hostname=node.hostname or "unknown",
                           node_id=node.node_id[:12], gpus=_num(node.gpus)))
        for node in alive(nodes) if not node.host and in_cidr(node.address, cidr)
    ]


def check_dry_run(
    result: t.Mapping[str, t.Any],
    nodes: list[Node],
    head_host: str,
    timeout: int,
) -> list[Violation]:
    """Violations from the placement and rendezvous dry-runs the probe ran inside the cluster."""
    violations: list[Violation] = []
    by_id = {n.node_id: n for n in nodes}
    placement = result.get("placement") or {}
    if placement.get("status") == "failed":
        driver_ip = placement.get("driver_ip", "")
        violations.append(
            Violation("F2", head_host, driver_ip,
                      _message("F2_PLACEMENT", host=head_host, bundles=placement.get("bundles"), driver_ip=driver_ip,
                               timeout=timeout, detail=placement.get("detail", "")))
        )
    for probe in result.get("rendezvous") or []:
        if probe.get("status") == "ok":
            continue
        node = by_id.get(probe.get("node_id", ""))
        host = (node.host if node else None) or probe.get("address", "unknown node")
        if probe.get("status") == "connect_failed":
            violations.append(
                Violation("F3", host, probe.get("address", ""),
                          _message("F3", host=host, address=probe.get("address", ""), driver_ip=probe.get("driver_ip", ""),
                                   port=probe.get("port", ""), detail=probe.get("detail", "")))
            )
        else:
            violations.append(
                Violation("F4", host, probe.get("address", ""),
                          _message("F4_TRANSFER", host=host, address=probe.get("address", ""), timeout=timeout,
                                   detail=probe.get("detail", "")))
            )
    return violations


def rank_label(name: str) -> str:
    """vLLM's actor name vllm_Worker_<instance>_TP1_PP0 -> 'TP1 PP0' (the name itself otherwise)."""
    return " ".join(re.findall(r"_((?:TP|PP|PCP)\d+)(?=_|$)", name)) or name


# How Ray words a rank's end that another rank's loss caused: vLLM's own shutdown kills its ranks
# (ray.kill), and a dead driver takes its actors along.
_CONSEQUENTIAL_DEATHS = ("killed by `ray.kill`", "owner has died", "owner died", "job has finished")


def culprit_ranks(ranks: t.Iterable[t.Mapping[str, t.Any]]) -> list[t.Mapping[str, t.Any]]:
    """The ranks that died first: dead for a reason of their own, not because vLLM shut the rest down."""
    dead = [r for r in ranks if r.get("state") == "DEAD"]
    own = [r for r in dead if not any(c in (r.get("cause") or "") for c in _CONSEQUENTIAL_DEATHS)]
    return sorted(own, key=lambda r: r.get("name") or "")


def check_vllm_server(
    server: t.Mapping[str, t.Any],
    ranks: t.Iterable[t.Mapping[str, t.Any]],
    nodes: list[Node],
    expected_ranks: int,
    head: str,
    container: str,
    timeout: int = 0,
) -> list[Violation]:
    """F20: vLLM's ranks as Ray's actor table shows them, given the state of the vLLM server container.

    server: {"running": bool, "died_under_ray": bool, "finished": str, "exit_code": int}. A server that
    exited while the Ray head kept running died on its own (a server stopped by the collection stops
    with Ray, or before it). Ranks: those of vLLM's newest Ray driver. A dead rank is named at once
    (waiting never brings it back); fewer alive ranks than expected (none yet, while vLLM starts) is
    for the caller to report at its deadline, as F20_COUNT.
    """
    ranks = list(ranks)
    if server.get("running"):
        # only the ranks of a driver Ray counts alive: a server restarted moments ago has not
        # connected yet, and the newest driver Ray knows is then its predecessor
        ranks = [r for r in ranks if not r.get("job_dead")]
        state = f"the vLLM server on {head} still runs"
    elif server.get("died_under_ray"):
        state = f"the vLLM server on {head} exited at {server.get('finished', '?')} with code {server.get('exit_code', '?')}"
    else:
        return []
    host_of = {n.address: n.host for n in nodes if n.host}
    # (PENDING_CREATION, RESTARTING: not yet, or not again, alive; only the deadline judges those)
    blamed = culprit_ranks(ranks) or ([r for r in ranks if r.get("state") == "DEAD"] if server.get("running") else [])
    violations = []
    for rank in blamed:
        address = rank.get("address") or "?"
        host = host_of.get(address) or f"the node at {address}"
        violations.append(
            Violation("F20", host, address,
                      _message("F20_RANK", host=host, rank=rank_label(rank.get("name") or "?"), address=address,
                               pid=rank.get("pid") or "?", cause=(rank.get("cause") or "no cause recorded").split(". ")[0],
                               server=state))
        )
    if violations:
        return violations
    if not server.get("running"):
        return [Violation("F20", head, "", _message("F20_EXITED", host=head, server=state[0].upper() + state[1:],
                                                    container=container))]
    alive_ranks = [r for r in ranks if r.get("state") == "ALIVE"]
    if len(alive_ranks) < expected_ranks:
        listing = ", ".join(f"{rank_label(r.get('name') or '?')} {r.get('state')} on {r.get('address')}"
                            for r in sorted(ranks, key=lambda r: (r.get("name") or ""))) or "none in Ray's actor table"
        return [Violation("F20", "cluster", "",
                          _message("F20_COUNT", alive=len(alive_ranks), expected=expected_ranks, timeout=timeout,
                                   ranks=listing))]
    return []


def rank_table(ranks: t.Iterable[t.Mapping[str, t.Any]], nodes: list[Node]) -> list[str]:
    """One line per vLLM rank, for the play's output: where each rank runs, and its state."""
    host_of = {n.address: n.host for n in nodes if n.host}
    return [
        f"{rank_label(r.get('name') or '?'):<8} {(host_of.get(r.get('address') or '') or '?'):<12} "
        f"{r.get('address') or '?':<16} {r.get('state') or '?':<8} pid={r.get('pid')}"
        for r in sorted(ranks, key=lambda r: (r.get("name") or ""))
    ]


def node_table(nodes: list[Node]) -> list[str]:
    """Human-readable lines for the play's output, one per node."""
    lines = []
    for n in sorted(nodes, key=lambda n: (not n.alive, not n.head, n.address)):
        lines.append(
            f"{(n.host or '?'):<12} {n.address:<16} {'head' if n.head else 'worker':<6} "
            f"{'alive' if n.alive else 'DEAD':<5} gpus={_num(n.gpus)} hostname={n.hostname} id={n.node_id[:12]}"
        )
    return lines


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
