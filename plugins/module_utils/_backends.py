# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How the cluster runs vLLM across its nodes (vllm_cluster_backend), as one row per backend. Roles branch on a
row's traits, never on the backend's name; adding a backend is a row here, its launcher's arguments (a function in
a module_utils file of its own) and its validate task file (cluster_validate/tasks/validate_<name>.yml).
Private to the collection."""

from __future__ import annotations

import dataclasses
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _mp_launcher

# Where the cluster_validate role runs for a backend: before vLLM loads a model (Ray's own view of the cluster
# can be checked without vLLM) or after its ranks started (vLLM's launcher is the only thing that forms the group).
VALIDATE_PHASES = ("before_serving", "after_serving")
# Which hosts run a vLLM container: the head alone (Ray places the other ranks) or every node.
RANK_HOSTS = ("head", "every_node")

MESSAGES = {
    "UNKNOWN": "vllm_cluster_backend {backend!r} is not a backend of this collection. Fix: set it to one of {known}.",
    "EXECUTOR": "vllm_cluster_executor {executor!r} cannot run under vllm_cluster_backend {backend!r}. Fix: set it "
                "to one of {allowed}, or leave it empty (the backend's default, {default}).",
    "BOTH": "vllm_cluster_executor {executor!r} and the deprecated vllm_server_distributed_executor_backend "
            "{legacy!r} disagree. Fix: remove vllm_server_distributed_executor_backend from the inventory.",
    # Ansible appends the release that removes it.
    "DEPRECATED": "vllm_server_distributed_executor_backend is deprecated: set vllm_cluster_executor instead "
                  "(the same values; the old name is ignored where the backend does not run its value, as under "
                  "mp).",
}


def no_launcher_args(node_rank: int, nodes: int, master_address: str, master_port: int) -> list[str]:
    """A backend whose vLLM finds its ranks by itself (Ray's placement group) adds nothing to the command."""
    return []


@dataclasses.dataclass(frozen=True)
class Backend:
    """One way of running vLLM across the nodes. Every field is a trait a role reads; none is read by name."""

    summary: str
    # Whether the backend runs a Ray cluster: the Ray head and worker containers, Ray's token, Ray in the image
    # (F11), Ray's ports free and validated. Without it the Ray roles remove what an earlier backend left.
    runs_ray: bool
    ranks_on: str
    # vLLM's entry point inside the container, `{model}` standing for vllm_server_model.
    entry: tuple[str, ...]
    # vLLM's --distributed-executor-backend values the backend can run, its default first.
    executors: tuple[str, ...]
    validate: str
    # A rendezvous all ranks dial at the head (vllm_cluster_mp_master_port): checked from the inventory (F19) and
    # by TCP from every node before any rank starts, and free on the head.
    rendezvous: bool
    # The ranks form one group that no rank can join late: one rank (re)starting restarts every rank.
    group_restart: bool
    # What one node adds to vLLM's command: (node rank, node count, master address, master port) -> arguments.
    launcher_args: t.Callable[[int, int, str, int], list[str]] = no_launcher_args


BACKENDS: dict[str, Backend] = {
    "ray": Backend(
        summary="a Ray cluster on the interconnect; vLLM, a Ray driver on the head, places its ranks through Ray",
        runs_ray=True,
        ranks_on="head",
        entry=("-m", "vllm.entrypoints.openai.api_server", "--model", "{model}"),
        executors=("ray", "mp", "uni"),
        validate="before_serving",
        rendezvous=False,
        group_restart=False,
    ),
    "mp": Backend(
        summary="no Ray: vLLM's own multi-node launcher, one container per node, rank 0 on the head serving the API",
        runs_ray=False,
        ranks_on="every_node",
        # The `vllm serve` CLI (python3 -m ... is the same entry point), the only one with the multi-node
        # launcher's flags and --headless.
        entry=("-m", "vllm.entrypoints.cli.main", "serve", "{model}"),
        executors=("mp",),
        validate="after_serving",
        rendezvous=True,
        group_restart=True,
        launcher_args=_mp_launcher.launcher_args,
    ),
}


def backend(name: str, table: t.Mapping[str, Backend] | None = None) -> Backend:
    """The row for a backend's name; an unknown name is refused with the known ones."""
    table = BACKENDS if table is None else table
    if name not in table:
        raise ValueError(MESSAGES["UNKNOWN"].format(backend=name, known=", ".join(sorted(table))))
    return table[name]


def executor(name: str, wanted: str = "", legacy: str = "", table: t.Mapping[str, Backend] | None = None) -> str:
    """vLLM's executor under a backend: vllm_cluster_executor where set (it must be one the backend runs), else
    the deprecated vllm_server_distributed_executor_backend where the backend runs it (the mp backend always ran
    its own executor whatever that said), else the backend's default."""
    row = backend(name, table)
    wanted, legacy = str(wanted or "").strip(), str(legacy or "").strip()
    if wanted:
        if wanted not in row.executors:
            raise ValueError(MESSAGES["EXECUTOR"].format(executor=wanted, backend=name,
                                                         allowed=", ".join(row.executors), default=row.executors[0]))
        if legacy and legacy != wanted:
            raise ValueError(MESSAGES["BOTH"].format(executor=wanted, legacy=legacy))
        return wanted
    if legacy in row.executors:
        return legacy
    return row.executors[0]


def traits(name: str, wanted_executor: str = "", legacy_executor: str = "",
           table: t.Mapping[str, Backend] | None = None) -> dict[str, t.Any]:
    """What the roles read of the backend (vllm_cluster_backend_traits), the executor resolved."""
    row = backend(name, table)
    chosen = executor(name, wanted_executor, legacy_executor, table)
    return {
        "name": name,
        "summary": row.summary,
        "runs_ray": row.runs_ray,
        "ranks_on": row.ranks_on,
        "entry": list(row.entry),
        "executor": chosen,
        # vLLM is a Ray driver (it joins the Ray head's PID namespace and dies with it) only with Ray's executor.
        "ray_driver": chosen == "ray",
        "validate": row.validate,
        "rendezvous": row.rendezvous,
        "group_restart": row.group_restart,
    }


def entry(name: str, model: str, table: t.Mapping[str, Backend] | None = None) -> list[str]:
    """vLLM's entry point for a backend, the model put in."""
    return [part.replace("{model}", str(model)) for part in backend(name, table).entry]


def launcher_args(name: str, node_rank: int, nodes: int, master_address: str, master_port: int,
                  table: t.Mapping[str, Backend] | None = None) -> list[str]:
    """What one node adds to vLLM's command under a backend."""
    return backend(name, table).launcher_args(node_rank, nodes, master_address, master_port)


def problems(table: t.Mapping[str, Backend] | None = None) -> list[str]:
    """A row's traits out of their domain (the unit tests hold every row, a toy one included, to these)."""
    table = BACKENDS if table is None else table
    found = []
    for name, row in table.items():
        if row.ranks_on not in RANK_HOSTS:
            found.append(f"{name}: ranks_on {row.ranks_on!r} not in {RANK_HOSTS}")
        if row.validate not in VALIDATE_PHASES:
            found.append(f"{name}: validate {row.validate!r} not in {VALIDATE_PHASES}")
        if not row.executors:
            found.append(f"{name}: no executor")
        if "{model}" not in row.entry:
            found.append(f"{name}: entry names no {{model}}")
        if row.rendezvous and row.ranks_on != "every_node":
            found.append(f"{name}: a rendezvous needs ranks on every node")
    return found
