"""The backend table: every row's traits in their domain, the executor each backend runs, the command each node
starts, and a toy third backend taken as one row (it is not shipped: the table stays ray and mp)."""

from __future__ import annotations

import dataclasses

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends

# A backend that is not shipped: one row, its launcher's arguments and nothing else in Python.
TOY = _backends.Backend(
    summary="one rank per node, no Ray, a launcher of its own",
    runs_ray=False,
    ranks_on="every_node",
    entry=("-m", "toy.serve", "{model}"),
    executors=("toy", "uni"),
    validate="after_serving",
    rendezvous=True,
    group_restart=True,
    launcher_args=lambda rank, nodes, address, port: [f"--toy-rank={rank}/{nodes}@{address}:{port}"],
)
WITH_TOY = {**_backends.BACKENDS, "toy": TOY}


def test_every_shipped_row_is_in_its_domain():
    assert not _backends.problems()


def test_the_shipped_backends():
    # The argument spec's choices come from here (lookup backends): a row removed by mistake would refuse inventories.
    assert list(_backends.BACKENDS) == ["ray", "mp"]


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"ranks_on": "rack", "rendezvous": False}, "toy: ranks_on 'rack' not in ('head', 'every_node')"),
        ({"validate": "never"}, "toy: validate 'never' not in ('before_serving', 'after_serving')"),
        ({"executors": ()}, "toy: no executor"),
        ({"entry": ("-m", "toy.serve")}, "toy: entry names no {model}"),
        ({"ranks_on": "head"}, "toy: a rendezvous needs ranks on every node"),
    ],
)
def test_a_row_out_of_its_domain_is_named(change, expected):
    assert _backends.problems({"toy": dataclasses.replace(TOY, **change)}) == [expected]


@pytest.mark.parametrize(
    "backend, wanted, legacy, expected",
    [
        ("ray", "", "", "ray"),
        ("mp", "", "", "mp"),
        ("ray", "uni", "", "uni"),
        ("ray", "mp", "", "mp"),
        ("ray", "", "uni", "uni"),  # the deprecated name still chooses where nothing else does
        ("ray", " uni ", "uni", "uni"),  # both set and agreeing
        # the mp backend always ran its own executor whatever the deprecated name said (an inventory written for
        # Ray served under `-e vllm_cluster_backend=mp`)
        ("mp", "", "ray", "mp"),
        ("toy", "", "", "toy"),
    ],
)
def test_the_executor(backend, wanted, legacy, expected):
    assert _backends.executor(backend, wanted, legacy, WITH_TOY) == expected


@pytest.mark.parametrize(
    "backend, wanted, legacy, message",
    [
        ("mp", "ray", "", "vllm_cluster_executor 'ray' cannot run under vllm_cluster_backend 'mp'. Fix: set it to one "
                          "of mp, or leave it empty (the backend's default, mp)."),
        ("ray", "uni", "ray", "vllm_cluster_executor 'uni' and the deprecated vllm_server_distributed_executor_backend "
                              "'ray' disagree. Fix: remove vllm_server_distributed_executor_backend from the inventory."),
        ("slurm", "", "", "vllm_cluster_backend 'slurm' is not a backend of this collection. Fix: set it to one of "
                          "mp, ray."),
    ],
)
def test_a_refused_setting_names_value_and_fix(backend, wanted, legacy, message):
    with pytest.raises(ValueError) as raised:
        _backends.executor(backend, wanted, legacy)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "backend, expected",
    [
        ("ray", {"runs_ray": True, "ranks_on": "head", "executor": "ray", "ray_driver": True,
                 "validate": "before_serving", "rendezvous": False, "group_restart": False}),
        ("mp", {"runs_ray": False, "ranks_on": "every_node", "executor": "mp", "ray_driver": False,
                "validate": "after_serving", "rendezvous": True, "group_restart": True}),
        ("toy", {"runs_ray": False, "ranks_on": "every_node", "executor": "toy", "ray_driver": False,
                 "validate": "after_serving", "rendezvous": True, "group_restart": True}),
    ],
)
def test_the_traits_roles_read(backend, expected):
    traits = _backends.traits(backend, table=WITH_TOY)
    assert {key: traits[key] for key in expected} == expected
    assert traits["name"] == backend


def test_a_ray_backend_with_another_executor_is_no_ray_driver():
    # uni (the bench's single-device serving) runs no Ray actors: vLLM must not join the head's processes.
    assert _backends.traits("ray", "uni")["ray_driver"] is False


@pytest.mark.parametrize(
    "backend, rank, expected",
    [
        ("ray", 0, ["-m", "vllm.entrypoints.openai.api_server", "--model", "org/m"]),
        ("mp", 0, ["-m", "vllm.entrypoints.cli.main", "serve", "org/m",
                   "--nnodes", "2", "--node-rank", "0", "--master-addr", "198.18.1.12", "--master-port", "29501"]),
        ("mp", 1, ["-m", "vllm.entrypoints.cli.main", "serve", "org/m",
                   "--nnodes", "2", "--node-rank", "1", "--master-addr", "198.18.1.12", "--master-port", "29501",
                   "--headless"]),
        ("toy", 1, ["-m", "toy.serve", "org/m", "--toy-rank=1/2@198.18.1.12:29501"]),
    ],
)
def test_the_command_a_node_starts(backend, rank, expected):
    command = (_backends.entry(backend, "org/m", WITH_TOY)
               + _backends.launcher_args(backend, rank, 2, "198.18.1.12", 29501, WITH_TOY))
    assert command == expected
