# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RDMA devices a node has, read from /sys/class/infiniband, against what NCCL is told to use (F23).
Private to the collection."""

from __future__ import annotations

import os

# An unused GID table entry reads as zeros; its type cannot be read at all.
_ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
_IPV4_MAPPED = "0000:0000:0000:0000:0000:ffff:"


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def read_devices(root: str = "/sys/class/infiniband") -> dict:
    """{hca: {port: {index: {"gid": ..., "type": ...}}}} of every used GID entry; {} where there is no RDMA device."""
    devices: dict = {}
    if not os.path.isdir(root):
        return devices
    for hca in sorted(os.listdir(root)):
        ports_dir = os.path.join(root, hca, "ports")
        devices[hca] = {}
        for port in sorted(os.listdir(ports_dir)) if os.path.isdir(ports_dir) else []:
            gids_dir = os.path.join(ports_dir, port, "gids")
            entries = {}
            for index in sorted(os.listdir(gids_dir), key=lambda i: int(i) if i.isdigit() else -1) if os.path.isdir(gids_dir) else []:
                gid = _read(os.path.join(gids_dir, index))
                if gid and gid != _ZERO_GID:
                    entries[index] = {"gid": gid, "type": _read(os.path.join(ports_dir, port, "gid_attrs", "types", index))}
            devices[hca][port] = entries
    return devices


def read_links(root: str = "/sys/class/infiniband") -> dict:
    """{hca: {"netdevs": [...], "ports": {port: state}}}: the network interfaces behind each device (its PCI function's
    net/ folder) and each port's state as the kernel words it ('4: ACTIVE', '1: DOWN'). All four RoCE functions of a
    ConnectX-7 exist whether a cable is plugged or not: only the state tells which carries a link."""
    links: dict = {}
    if not os.path.isdir(root):
        return links
    for hca in sorted(os.listdir(root)):
        net = os.path.join(root, hca, "device", "net")
        ports_dir = os.path.join(root, hca, "ports")
        links[hca] = {
            "netdevs": sorted(os.listdir(net)) if os.path.isdir(net) else [],
            "ports": {port: _read(os.path.join(ports_dir, port, "state"))
                      for port in (sorted(os.listdir(ports_dir)) if os.path.isdir(ports_dir) else [])},
        }
    return links


def hca_names(spec: str) -> list[str]:
    """The devices NCCL_IB_HCA names: 'mlx5_0:1,=mlx5_1' -> ['mlx5_0', 'mlx5_1']; an exclusion list ('^...') names none
    that must exist."""
    spec = str(spec or "").strip()
    if not spec or spec.startswith("^"):
        return []
    spec = spec.lstrip("=")
    return [entry.split(":", 1)[0].strip() for entry in spec.split(",") if entry.split(":", 1)[0].strip()]


def _ipv4_rocev2(entries: dict) -> list[str]:
    return [i for i, e in entries.items() if e["gid"].startswith(_IPV4_MAPPED) and "v2" in e["type"].lower()]


def _active(state: str) -> bool:
    return state.split(":")[-1].strip().upper() == "ACTIVE"


def link_problems(links: dict, spec: str, interface: str, host: str) -> list[str]:
    """One sentence per HCA named in NCCL_IB_HCA whose port carries no link, and one when none of them is behind the
    interconnect interface (the CIDR's): NCCL would fall back to sockets, or carry the tensors over another port.
    Devices the host lacks are hca_problems' to name; without what the host's sysfs says (links empty), nothing."""
    names = [hca for hca in hca_names(spec) if hca in links]
    problems = []
    for hca in names:
        for port, state in sorted(links[hca]["ports"].items()):
            if state and not _active(state):
                active = sorted(other for other, link in links.items()
                                if any(_active(s) for s in link["ports"].values()))
                problems.append(f"[F23] {host}: {hca} port {port} is {state.split(':')[-1].strip()}: no link on it (a "
                                f"cable in another port, or none); NCCL would fall back to sockets. Fix: plug the "
                                f"interconnect cable into {hca}'s port, or name in vllm_cluster_nccl_ib_hca the HCAs "
                                f"with a link (ACTIVE: {', '.join(active) or 'none'}).")
    behind = [hca for hca, link in links.items() if interface and interface in link["netdevs"]]
    if names and interface and behind and not set(behind) & set(names):
        problems.append(f"[F23] {host}: NCCL_IB_HCA names {', '.join(names)}, none of them behind {interface}, the "
                        f"interconnect interface (the one vllm_cluster_interconnect_cidr chose); NCCL's RDMA would "
                        f"carry the tensors over another port than the interconnect. Fix: name {behind[0]} (the HCA of "
                        f"{interface}) in vllm_cluster_nccl_ib_hca.")
    return problems


def hca_problems(devices: dict, spec: str, gid_index: str, host: str) -> list[str]:
    """One sentence per HCA named in NCCL_IB_HCA that the node lacks, or that has no usable GID at a forced index."""
    problems = []
    present = sorted(devices)
    for hca in hca_names(spec):
        if hca not in devices:
            problems.append(f"[F23] {host}: NCCL_IB_HCA names {hca}, which this host does not have (RDMA devices: "
                            f"{', '.join(present) or 'none'}); NCCL would fall back to sockets. Fix: correct "
                            "vllm_cluster_nccl_ib_hca (ibdev2netdev or `ls /sys/class/infiniband` lists them).")
            continue
        if str(gid_index).strip() == "":
            continue
        for port, entries in sorted(devices[hca].items()):
            entry = entries.get(str(gid_index).strip())
            if entry and "v2" in entry["type"].lower():
                continue
            usable = _ipv4_rocev2(entries)
            found = f"{entry['gid']} ({entry['type'] or 'type unknown'})" if entry else "no GID"
            problems.append(f"[F23] {host}: {hca} port {port} has {found} at NCCL_IB_GID_INDEX={gid_index}, not a RoCE v2 "
                            f"GID (IPv4 RoCE v2 at index {', '.join(usable) or 'none: its interface has no IPv4 address'}). "
                            "Fix: leave vllm_cluster_nccl_ib_gid_index empty so that NCCL picks each HCA's GID, or set the "
                            "index every HCA has.")
    return problems
