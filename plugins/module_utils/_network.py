# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Interconnect arithmetic shared by the filter plugins and the ray_cluster_check module.

Private to the collection. Uses the standard library's ipaddress so the module needs nothing
extra on the target hosts.
"""

from __future__ import annotations

import ipaddress
import re
import typing as t

# Addresses a node may register when hostname resolution, not the interconnect, picked its IP.
LOOPBACK_NETWORK = ipaddress.ip_network("127.0.0.0/8")


# A network as nft reads it the way Python does: digits, hex, dots and colons, and a decimal prefix length without a
# leading zero (nft reads /010 as octal: /8; older nft read /08 as /0). No zone (%eth0), no netmask
# (/255.255.255.0), nothing around it.
_AS_NFT_READS = re.compile(r"[0-9A-Fa-f:.]+(/(0|[1-9][0-9]{0,2}))?")


def written_network(value: t.Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """The network value names where it is written as nftables reads it, as the firewall's rules and preflight's
    checks take it (as written): no host bits set (nft clears them quietly: 198.51.100.7/24 would admit the /24);
    None otherwise. An address without a prefix names its own host network."""
    if not isinstance(value, str) or not _AS_NFT_READS.fullmatch(value):
        return None
    try:
        return ipaddress.ip_network(value)
    except ValueError:
        return None


def parse_cidr(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """Parse a CIDR, accepting host bits set (192.168.200.12/24 means 192.168.200.0/24).

    Raises ValueError with a message naming the value.
    """
    try:
        return ipaddress.ip_network(str(cidr).strip(), strict=False)
    except ValueError as exc:
        raise ValueError(f"{cidr!r} is not a valid CIDR ({exc})") from None


def in_cidr(address: str, cidr: str) -> bool:
    """True when address lies inside cidr; loopback never counts as inside."""
    try:
        ip = ipaddress.ip_address(str(address).strip())
    except ValueError:
        return False
    if ip in LOOPBACK_NETWORK:
        return False
    network = parse_cidr(cidr)
    return ip.version == network.version and ip in network


def host_addresses(facts: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """Every IPv4 address of a host as {interface, address, prefix, mtu}, from gathered facts.

    Ansible stores each interface under ansible_facts[<name with - and : replaced by _>],
    primary address in ipv4, aliases in ipv4_secondaries; the real name is in 'device'.
    """
    result: list[dict[str, t.Any]] = []
    for name in facts.get("interfaces", []) or []:
        key = name.replace("-", "_").replace(":", "_")
        iface = facts.get(key)
        if not isinstance(iface, dict):
            continue
        entries = []
        if isinstance(iface.get("ipv4"), dict):
            entries.append(iface["ipv4"])
        entries.extend(e for e in iface.get("ipv4_secondaries", []) or [] if isinstance(e, dict))
        for entry in entries:
            if entry.get("address"):
                result.append(
                    {
                        "interface": iface.get("device", name),
                        "address": entry["address"],
                        "prefix": entry.get("prefix"),
                        "mtu": iface.get("mtu"),
                    }
                )
    return result


def interconnect_candidates(facts: t.Mapping[str, t.Any], cidr: str) -> list[dict[str, t.Any]]:
    """The host's addresses inside the interconnect CIDR (what the roles pin every layer to)."""
    parse_cidr(cidr)
    return [entry for entry in host_addresses(facts) if in_cidr(entry["address"], cidr)]


def listening_ports(ss_output: str) -> set[int]:
    """The TCP ports something listens on, from `ss -Hltn` (any local address, IPv4 or IPv6)."""
    ports = set()
    for line in (ss_output or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0] == "LISTEN":
            port = fields[3].rsplit(":", 1)[-1]
            if port.isdigit():
                ports.add(int(port))
    return ports


def ports_taken(ss_output: str, wanted: t.Mapping[str, t.Any]) -> list[str]:
    """`name=port` for each wanted port (variable name -> port) that something already listens on."""
    taken = listening_ports(ss_output)
    return [f"{name}={port}" for name, port in sorted(wanted.items(), key=lambda item: int(item[1]))
            if int(port) in taken]


def interconnect_choice(facts: t.Mapping[str, t.Any], cidr: str, node_ip: str = "", interface: str = "") -> dict[str, t.Any]:
    """The address and interface every layer of a host is pinned to.

    A configured address or interface (host_vars) is kept as given; preflight then checks it against the facts.
    Otherwise the address is the host's one address inside the CIDR ('' when it has none or several: preflight
    names the case), and the interface the one carrying it. The MTU is that interface's ('' when unknown).
    """
    candidates = interconnect_candidates(facts, cidr)
    configured = bool(str(node_ip or "").strip())
    ip = str(node_ip).strip() if configured else (candidates[0]["address"] if len(candidates) == 1 else "")
    chosen = str(interface or "").strip() or next((c["interface"] for c in candidates if c["address"] == ip), "")
    mtu = next((c["mtu"] for c in candidates if c["interface"] == chosen), "")
    return {"ip": ip, "interface": chosen, "candidates": candidates, "configured": configured,
            "mtu": "" if mtu is None else mtu}
