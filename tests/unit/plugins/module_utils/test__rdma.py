"""F23: the HCAs NCCL is told to use exist on the host, carry a link, one of them is the interconnect interface's,
and a forced GID index is a RoCE v2 GID on each.
Read from the Sparks' /sys/class/infiniband as fixture trees (tests/fixtures/sparks/infiniband)."""

from __future__ import annotations

import pathlib
import shutil

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rdma import (
    hca_names,
    hca_problems,
    link_problems,
    read_devices,
    read_links,
)

SPARK_1 = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "sparks" / "infiniband" / "spark-1"


def test_read_devices_keeps_the_used_entries_with_their_types():
    devices = read_devices(str(SPARK_1))
    assert sorted(devices) == ["roceP2p1s0f0", "roceP2p1s0f1", "rocep1s0f0", "rocep1s0f1"]
    assert sorted(devices["rocep1s0f1"]["1"]) == ["0", "1", "2", "3"]
    assert devices["rocep1s0f1"]["1"]["3"] == {"gid": "0000:0000:0000:0000:0000:ffff:c0a8:c80c", "type": "RoCE v2"}
    # the twin port carries no IPv4 address: link-local GIDs only
    assert sorted(devices["roceP2p1s0f1"]["1"]) == ["0", "1"]


def test_no_rdma_device_at_all(tmp_path):
    assert read_devices(str(tmp_path / "absent")) == {}


@pytest.mark.parametrize(
    "spec, names",
    [("rocep1s0f1,roceP2p1s0f1", ["rocep1s0f1", "roceP2p1s0f1"]), ("=mlx5_0:1,mlx5_1", ["mlx5_0", "mlx5_1"]),
     ("^mlx5_3", []), ("", [])],
)
def test_hca_names(spec, names):
    assert hca_names(spec) == names


@pytest.mark.parametrize(
    "case, spec, gid_index, expected",
    [
        ("the example: both HCAs, index left to NCCL", "rocep1s0f1,roceP2p1s0f1", "", []),
        ("the issue's forced index 3: the twin port has none",
         "rocep1s0f1,roceP2p1s0f1", "3",
         ["[F23] spark-1: roceP2p1s0f1 port 1 has no GID at NCCL_IB_GID_INDEX=3, not a RoCE v2 GID (IPv4 RoCE v2 at "
          "index none: its interface has no IPv4 address)."]),
        ("index 3 on the port that has it", "rocep1s0f1", "3", []),
        ("index 2 is RoCE v1", "rocep1s0f1", "2",
         ["[F23] spark-1: rocep1s0f1 port 1 has 0000:0000:0000:0000:0000:ffff:c0a8:c80c (IB/RoCE v1) at "
          "NCCL_IB_GID_INDEX=2, not a RoCE v2 GID (IPv4 RoCE v2 at index 3)."]),
        ("a typo", "rocep1s0f9", "", ["[F23] spark-1: NCCL_IB_HCA names rocep1s0f9, which this host does not have"]),
        ("an exclusion list checks nothing", "^rocep1s0f9", "3", []),
    ],
)
def test_hca_problems(case, spec, gid_index, expected):
    problems = hca_problems(read_devices(str(SPARK_1)), spec, gid_index, "spark-1")
    assert len(problems) == len(expected), (case, problems)
    for problem, start in zip(problems, expected):
        assert problem.startswith(start), (case, problem)


def test_read_links_names_each_devices_interfaces_and_port_states():
    links = read_links(str(SPARK_1))
    assert links["rocep1s0f1"] == {"netdevs": ["enp1s0f1np1"], "ports": {"1": "4: ACTIVE"}}
    assert links["roceP2p1s0f1"] == {"netdevs": ["enP2p1s0f1np1"], "ports": {"1": "4: ACTIVE"}}  # the same cable
    assert links["rocep1s0f0"]["ports"] == {"1": "1: DOWN"}
    assert read_links(str(SPARK_1.parent / "absent")) == {}


def cable_in(tmp_path, function):
    """A copy of spark-1's RDMA devices with the interconnect cable in port `function` (f0 or f1)."""
    root = tmp_path / "infiniband"
    shutil.copytree(SPARK_1, root)
    for state in root.glob("*/ports/1/state"):
        hca = state.parts[-4]
        state.write_text("4: ACTIVE\n" if hca.endswith(function) else "1: DOWN\n")
    return str(root)


@pytest.mark.parametrize(
    "case, cable, spec, interface, expected",
    [
        ("the example: cable in f1, both functions of f1 named", "f1", "rocep1s0f1,roceP2p1s0f1", "enp1s0f1np1", []),
        ("#32: the cable in the other port", "f0", "rocep1s0f1,roceP2p1s0f1", "enp1s0f0np0",
         ["[F23] spark-1: rocep1s0f1 port 1 is DOWN: no link on it (a cable in another port, or none); NCCL would "
          "fall back to sockets. Fix: plug the interconnect cable into rocep1s0f1's port, or name in "
          "vllm_cluster_nccl_ib_hca the HCAs with a link (ACTIVE: roceP2p1s0f0, rocep1s0f0).",
          "[F23] spark-1: roceP2p1s0f1 port 1 is DOWN",
          "[F23] spark-1: NCCL_IB_HCA names rocep1s0f1, roceP2p1s0f1, none of them behind enp1s0f0np0, the "
          "interconnect interface (the one vllm_cluster_interconnect_cidr chose); NCCL's RDMA would carry the tensors "
          "over another port than the interconnect. Fix: name rocep1s0f0 (the HCA of enp1s0f0np0)"]),
        ("the HCAs of the cabled port", "f0", "rocep1s0f0,roceP2p1s0f0", "enp1s0f0np0", []),
        ("the twin function alone is the interconnect's cable too", "f1", "roceP2p1s0f1", "enP2p1s0f1np1", []),
        ("a device the host lacks is hca_problems' to name", "f1", "rocep1s0f9", "enp1s0f1np1", []),
        ("no HCA named: NCCL chooses, nothing to check", "f0", "", "enp1s0f0np0", []),
        ("an interface with no HCA behind it (a plain NIC)", "f1", "rocep1s0f1", "eth0", []),
    ],
)
def test_link_problems(tmp_path, case, cable, spec, interface, expected):
    problems = link_problems(read_links(cable_in(tmp_path, cable)), spec, interface, "spark-1")
    assert len(problems) == len(expected), (case, problems)
    for problem, start in zip(problems, expected):
        assert problem.startswith(start), (case, problem)
