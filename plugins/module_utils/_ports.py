# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every port the cluster opens, as one table: which variable sets it, which hosts open it under which backend,
who must reach it, which of the collection's processes holds it. Preflight (in range, not twice, free), diagnose's
probe and the documentation read it; a port a role opens that is not here fails tests/unit/test_port_registry.py.
Ports nobody can name (vLLM's engine and message queues, Gloo, NCCL, the ranks' own) come from the kernel's
ephemeral range: the firewall admits the interconnect by source network for them (module_utils/_firewall.py).
Private to the collection."""

from __future__ import annotations

import dataclasses
import typing as t

# When a row's port is open: always, or only where the backend's trait (vllm_cluster_backend_traits, which also
# carries `supervised`: vllm_cluster_liveness) says so, or while weights staging copies.
NEEDS = ("always", "runs_ray", "rendezvous", "weights_staged", "supervised")
HOSTS = ("head", "every_node")
# Who must reach it: the other nodes over the interconnect, clients on the management side, or the node itself.
REACH = ("interconnect", "management", "loopback")
# What holds it: a running one of these is the port's rightful owner (preflight's free-port check skips it); link is
# the link gate's rank 0, for the seconds it measures.
OWNERS = ("ray", "vllm", "weights", "link", "supervisor")


@dataclasses.dataclass(frozen=True)
class Port:
    variable: str
    name: str
    hosts: str
    needs: str
    reach: str
    owner: str
    # The owning role's default: plays that do not load that role (preflight, diagnose) still know the port.
    fallback: int
    # Open only while something runs (the staging server exits when every worker is done).
    transient: bool = False
    # The path a Prometheus scrapes there, for the ports that serve metrics (playbooks/metrics_targets.yml).
    metrics: str = ""


PORTS: tuple[Port, ...] = (
    Port("vllm_cluster_ray_port", "Ray GCS", "head", "runs_ray", "interconnect", "ray", 6379),
    Port("vllm_cluster_ray_node_manager_port", "Ray raylet", "every_node", "runs_ray", "interconnect", "ray", 6380),
    Port("vllm_cluster_ray_object_manager_port", "Ray object manager", "every_node", "runs_ray", "interconnect", "ray",
         6381),
    Port("vllm_cluster_ray_dashboard_agent_grpc_port", "Ray dashboard agent (gRPC)", "every_node", "runs_ray",
         "interconnect", "ray", 6382),
    # Prometheus scrapes it: from ray_firewall_allowed_cidrs when it sits on the management side.
    Port("vllm_cluster_ray_metrics_export_port", "Ray metrics export", "every_node", "runs_ray", "interconnect", "ray",
         6383, metrics="/metrics"),
    Port("vllm_cluster_ray_runtime_env_agent_port", "Ray runtime-env agent", "every_node", "runs_ray", "interconnect",
         "ray", 6384),
    Port("vllm_cluster_ray_dashboard_agent_listen_port", "Ray dashboard agent (HTTP)", "every_node", "runs_ray",
         "interconnect", "ray", 52365),
    Port("vllm_cluster_ray_client_server_port", "Ray client server", "head", "runs_ray", "interconnect", "ray", 10001),
    Port("vllm_cluster_ray_autoscaler_metric_port", "Ray autoscaler metrics", "head", "runs_ray", "interconnect", "ray",
         44217, metrics="/metrics"),
    Port("vllm_cluster_ray_dashboard_metric_port", "Ray dashboard metrics", "head", "runs_ray", "interconnect", "ray",
         44227, metrics="/metrics"),
    # ray_head_dashboard_host is loopback by default: the dashboard's Jobs API runs code.
    Port("ray_head_dashboard_port", "Ray dashboard", "head", "runs_ray", "loopback", "ray", 8265),
    # vLLM's /metrics answers without the API key (the key guards /v1 alone): measured on the lab, 200 beside a 401.
    Port("vllm_server_port", "vLLM API", "head", "always", "management", "vllm", 8000, metrics="/metrics"),
    Port("vllm_cluster_mp_master_port", "vLLM rendezvous (torch's TCP store)", "head", "rendezvous", "interconnect",
         "vllm", 29501),
    Port("vllm_cluster_weights_port", "weights staging (while copying)", "head", "weights_staged", "interconnect",
         "weights", 29510, transient=True),
    Port("vllm_cluster_link_port", "link gate rendezvous (while measuring)", "head", "always", "interconnect", "link",
         29520, transient=True),
    # The supervisors' signed state for each other and their /metrics (role supervisor).
    Port("vllm_cluster_supervisor_port", "supervisor (peers, metrics)", "every_node", "supervised", "interconnect",
         "supervisor", 29530, metrics="/metrics"),
)

# Ray's workers take their ports from this range on every node (the ranks' actors, the driver's).
RANGE_LOW, RANGE_HIGH = "vllm_cluster_ray_min_worker_port", "vllm_cluster_ray_max_worker_port"
RANGE_FALLBACK = {RANGE_LOW: 10002, RANGE_HIGH: 19999}

# Port settings that open nothing of the cluster's: the firewall admits them.
NOT_OPENED = {
    "ray_firewall_ssh_port": "Ansible's own (sshd), admitted from the management side",
    "ray_firewall_management_ports": "an operator's services, admitted from the management side",
    "ray_firewall_confirm_port": "where the controller probes a node after new rules (sshd by default)",
}

MESSAGES = {
    "NOT_TCP": "{name}={value} is not a TCP port (1-65535).",
    "TWICE": "{name}={value} is also given to {others}.",
    "IN_RANGE": "{name}={value} lies inside Ray's worker port range {low}-{high}.",
    "RANGE": "vllm_cluster_ray_min_worker_port={low} is not below vllm_cluster_ray_max_worker_port={high}: Ray "
             "needs a range of ports for its workers.",
}


def variables() -> list[str]:
    """Every variable that sets a port or the workers' range, in the table's order."""
    return [port.variable for port in PORTS] + [RANGE_LOW, RANGE_HIGH]


def _value(values: t.Mapping[str, t.Any], variable: str, fallback: int) -> t.Any:
    value = values.get(variable, "")
    return fallback if value is None or str(value).strip() == "" else value


def tcp_port(value: t.Any) -> int | None:
    """A TCP port (1-65535) written as plain ASCII digits, else None. The one reading of a port setting: the
    registry's checks and the firewall's both use it (no '+22', '2_2' or '²', which int() would take or trip on)."""
    text = str(value).strip()
    return int(text) if text.isascii() and text.isdigit() and 1 <= int(text) <= 65535 else None


def _open(port: Port, traits: t.Mapping[str, t.Any], weights_staged: bool) -> bool:
    if port.needs == "always":
        return True
    if port.needs == "weights_staged":
        return bool(weights_staged)
    return bool(traits.get(port.needs))


def opened(values: t.Mapping[str, t.Any], traits: t.Mapping[str, t.Any], is_head: bool = True,
           weights_staged: bool = False, held: t.Iterable[str] = (), reach: str = "") -> dict[str, t.Any]:
    """variable -> port for every port this host opens under the backend (traits: vllm_cluster_backend_traits),
    leaving out those whose owner already runs (`held`: ray, vllm, weights) and, with `reach`, those others reach
    otherwise. A host that is not the head opens only the every-node rows. Values as given (checked by problems)."""
    held = set(held)
    return {port.variable: _value(values, port.variable, port.fallback) for port in PORTS
            if _open(port, traits, weights_staged) and (is_head or port.hosts == "every_node")
            and port.owner not in held and (not reach or port.reach == reach)}


def scraped(values: t.Mapping[str, t.Any], traits: t.Mapping[str, t.Any]) -> list[tuple[Port, int | None]]:
    """The ports that serve metrics under the backend, each with its port (None where the setting is no port)."""
    return [(port, tcp_port(_value(values, port.variable, port.fallback))) for port in PORTS
            if port.metrics and _open(port, traits, False)]


def worker_range(values: t.Mapping[str, t.Any], traits: t.Mapping[str, t.Any]) -> tuple[t.Any, t.Any] | None:
    """Ray's workers' range where the backend runs Ray, else None."""
    if not traits.get("runs_ray"):
        return None
    return _value(values, RANGE_LOW, RANGE_FALLBACK[RANGE_LOW]), _value(values, RANGE_HIGH, RANGE_FALLBACK[RANGE_HIGH])


def problems(values: t.Mapping[str, t.Any], traits: t.Mapping[str, t.Any], weights_staged: bool = False) -> list[str]:
    """What is wrong with the ports the cluster opens under this backend (the head's set, every other host's is
    within it): not TCP, given to two variables, inside Ray's workers' range (where Ray runs), a range upside down."""
    ports = opened(values, traits, True, weights_staged)
    limits = worker_range(values, traits)
    found = [MESSAGES["NOT_TCP"].format(name=name, value=value)
             for name, value in ports.items() if tcp_port(value) is None]
    if limits is not None:
        found += [MESSAGES["NOT_TCP"].format(name=name, value=value)
                  for name, value in zip((RANGE_LOW, RANGE_HIGH), limits) if tcp_port(value) is None]
    if found:
        return found
    if limits is not None and int(limits[0]) >= int(limits[1]):
        return [MESSAGES["RANGE"].format(low=limits[0], high=limits[1])]
    singles = {name: int(value) for name, value in ports.items()}
    reported: set[int] = set()
    for name, value in singles.items():
        others = [other for other, port in singles.items() if other != name and port == value]
        if others and value not in reported:
            found.append(MESSAGES["TWICE"].format(name=name, value=value, others=", ".join(others)))
            reported.add(value)
        elif not others and limits is not None and int(limits[0]) <= value <= int(limits[1]):
            found.append(MESSAGES["IN_RANGE"].format(name=name, value=value, low=limits[0], high=limits[1]))
    return found


def probes(values: t.Mapping[str, t.Any], traits: t.Mapping[str, t.Any], is_head: bool,
           weights_staged: bool = False) -> list[dict[str, t.Any]]:
    """What another node may probe at this host's interconnect address: {name, port, transient} for every port the
    host opens for the interconnect (the API answers on the management address, the dashboard on loopback)."""
    by_variable = {port.variable: port for port in PORTS}
    return [{"name": by_variable[variable].name, "port": int(value), "transient": by_variable[variable].transient}
            for variable, value in opened(values, traits, is_head, weights_staged, reach="interconnect").items()
            if tcp_port(value) is not None]


def docs_table() -> str:
    """The table docs/architecture.md shows (a unit test keeps the two the same)."""
    rows = ["| variable | default | port | hosts | open when | reached from | held by |", "|---|---|---|---|---|---|---|"]
    rows += [f"| `{port.variable}` | {port.fallback} | {port.name} | {port.hosts.replace('_', ' ')} | "
             f"{port.needs.replace('_', ' ')} | {port.reach} | {port.owner} |" for port in PORTS]
    rows.append(f"| `{RANGE_LOW}`, `{RANGE_HIGH}` | {RANGE_FALLBACK[RANGE_LOW]}-{RANGE_FALLBACK[RANGE_HIGH]} | "
                "Ray's workers (a range) | every node | runs ray | interconnect | ray |")
    return "\n".join(rows)


def domain_problems() -> list[str]:
    """A row out of its domain (a unit test holds the table to it)."""
    found = []
    for port in PORTS:
        for field, allowed in (("hosts", HOSTS), ("needs", NEEDS), ("reach", REACH), ("owner", OWNERS)):
            if getattr(port, field) not in allowed:
                found.append(f"{port.variable}: {field} {getattr(port, field)!r} not in {allowed}")
    names = [port.variable for port in PORTS]
    found += [f"{name}: twice in the table" for name in sorted({n for n in names if names.count(n) > 1})]
    return found
