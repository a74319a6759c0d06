# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Ray-free backend (vllm_cluster_backend=mp): vLLM's own multi-node launcher, every node running
`vllm serve ... --nnodes N --node-rank R --master-addr A --master-port M`, rank 0 serving the API and the others
`--headless`. What ranks the inventory's hosts get, the launcher's arguments, and what the launcher would
refuse or hang on, decided here and table-tested. Private to the collection."""

from __future__ import annotations

import typing as t

MESSAGES = {
    # vLLM's own check (vllm/engine/arg_utils.py): the world is split evenly between the nodes.
    "F9_SPLIT": "[F9] cluster: vllm_server_tensor_parallel_size {tp} x vllm_server_pipeline_parallel_size {pp} = "
                "{world} ranks cannot be split evenly between the inventory's {nodes} nodes (vLLM's launcher "
                "refuses: '--nnodes {nodes} must evenly divide the total world size'). Fix: make the world size a "
                "multiple of the node count, or serve on fewer nodes.",
    "F9_LOCAL": "[F9] cluster: {world} ranks over {nodes} nodes put {local} ranks on each node, but each has "
                "{per_node} GPUs (vllm_cluster_gpus_per_node). Fix: lower the parallel sizes or add nodes.",
    "F19_OFF_INTERCONNECT": "[F19] {head}: vLLM's master address {address} (vllm_cluster_mp_master_addr) is not the "
                            "head's interconnect address {head_ip} ({interface}, {cidr}); ranks on other nodes would "
                            "dial it outside the interconnect and, where that network does not carry them, wait "
                            "for the rendezvous forever, with no error. Fix: leave vllm_cluster_mp_master_addr "
                            "empty (the head's interconnect address) or set it to {head_ip}.",
    "F19": "[F19] {host}: cannot open TCP to vLLM's master {address}:{port} (rank 0 on {head}) from its "
           "interconnect {interface} ({ip}) within {timeout} s; its rank would wait for the rendezvous forever, "
           "with no error. Fix: check the link (`ping -I {interface} {address}`) and that firewalls admit TCP "
           "{port} from {cidr}; vllm_cluster_mp_master_port must be free on {head}.",
    "F19_LISTEN": "[F19] {head}: {error}: rank 0 could not bind its rendezvous there either. Fix: free port {port} on "
                  "{head} or set vllm_cluster_mp_master_port, and leave vllm_cluster_mp_master_addr empty (the head's "
                  "interconnect address).",
    # Measured in the lab: a headless rank killed, rank 0 kept answering /health 200 while completions failed.
    "F20_RANK": "[F20] {host}: vLLM's rank {rank} (container {name}) {found}; the {ranks} ranks serve only together, "
                "and rank 0 on {head} may still answer /health while every completion fails. Fix: read `docker logs "
                "{name}` on {host}, then restart every rank together (site.yml --tags vllm -e "
                "vllm_cluster_restart=true).",
    "RANKS_ANSWERED": "vLLM's {count} ranks run ({hosts}); rank 0 answered at {url} ({tokens} tokens in {waited} s)",
}


def node_ranks(head: str, workers: t.Sequence[str]) -> dict[str, int]:
    """Rank 0 for the head (it serves the API), then the workers in inventory order."""
    ranks = {str(head): 0}
    for worker in workers:
        if str(worker) not in ranks:
            ranks[str(worker)] = len(ranks)
    return ranks


def split_problems(tp: t.Any, pp: t.Any, nodes: int, per_node: t.Any) -> list[str]:
    """What vLLM's launcher would refuse, or could not place, for T x P ranks over `nodes` nodes."""
    world, nodes, per_node = int(tp) * int(pp), int(nodes), int(per_node)
    if nodes < 1:
        return []
    if world % nodes:
        return [MESSAGES["F9_SPLIT"].format(tp=int(tp), pp=int(pp), world=world, nodes=nodes)]
    local = world // nodes
    if local > per_node:
        return [MESSAGES["F9_LOCAL"].format(world=world, nodes=nodes, local=local, per_node=per_node)]
    return []


def launcher_args(rank: int, nodes: int, master_address: str, master_port: t.Any) -> list[str]:
    """The arguments every rank adds to `vllm serve`: where the rendezvous is, and which rank it is; the ranks
    other than 0 run headless (no API server; only the `vllm serve` CLI has the flag)."""
    args = ["--nnodes", str(int(nodes)), "--node-rank", str(int(rank)),
            "--master-addr", str(master_address), "--master-port", str(int(master_port))]
    return args + (["--headless"] if int(rank) > 0 else [])


def unreachable_master(host: str, address: str, port: t.Any, head: str, interface: str, ip: str, timeout: t.Any,
                       cidr: str) -> str:
    """F19 for one node that could not open TCP to the master."""
    return MESSAGES["F19"].format(host=host, address=address, port=port, head=head, interface=interface, ip=ip,
                                  timeout=timeout, cidr=cidr)


def listen_problem(head: str, rc: t.Any, error: str, port: t.Any) -> str:
    """F19 on the head: the throwaway listener (roles/vllm_server/files/master_listener.py) could not bind the master
    address and port (it exited non-zero with the reason on stderr); '' where it listened."""
    if rc == 0:
        return ""
    return MESSAGES["F19_LISTEN"].format(head=head, error=(error or "").strip() or f"the listener exited {rc}",
                                         port=port)


def master_problems(head: str, address: str, head_ip: str, interface: str, cidr: str) -> list[str]:
    """F19 from the inventory alone: the master must be the head's interconnect address."""
    if str(address) == str(head_ip):
        return []
    return [MESSAGES["F19_OFF_INTERCONNECT"].format(head=head, address=address, head_ip=head_ip, interface=interface,
                                                    cidr=cidr)]


def rank_problems(containers: t.Mapping[str, t.Any], ranks: t.Mapping[str, int], name: str) -> list[str]:
    """F20 for the mp backend: every rank's container (host -> its docker inspect, None when absent) must run.
    Nothing to say when no rank was ever started (every container absent): the vllm play starts them."""
    if not any(containers.get(host) for host in ranks):
        return []
    head = next((host for host, rank in ranks.items() if rank == 0), "?")
    problems = []
    for host, rank in sorted(ranks.items(), key=lambda item: item[1]):
        container = containers.get(host) or {}
        state = container.get("State") or {}
        if state.get("Running"):
            continue
        found = (f"is {state.get('Status', '?')} (exit code {state.get('ExitCode', '?')} at "
                 f"{str(state.get('FinishedAt') or '?')[:19]})") if container else "does not exist"
        problems.append(MESSAGES["F20_RANK"].format(host=host, rank=rank, name=name, found=found, ranks=len(ranks),
                                                    head=head))
    return problems
