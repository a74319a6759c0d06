# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a node can open TCP to each of a list of addresses and ports, all at once. diagnose's probe of the other
nodes' interconnect ports ran one wait_for per port: a module start each (~0.4 s), and a refused port is retried until
the timeout (2 s), so a cluster with its ranks down took ~25 s to report what one round of connects shows in the
timeout. Only connects: nothing is sent. Private to the collection."""

from __future__ import annotations

import concurrent.futures
import errno
import socket
import typing as t

# Enough for every port of every other node of a large cluster at once; each thread only waits on a connect.
MAX_THREADS = 64

# What the report says of a port that did not answer, by why (the words diagnose's table shows).
REFUSED = "refused: nothing listens there, or a firewall rejects"
TIMED_OUT = "no answer within {timeout:g} s: filtered, or the address is not on the network"
UNREACHABLE = "no route to the address ({error})"
UNRESOLVED = "the name does not resolve ({error})"
NOT_AN_ADDRESS = "not an address to connect to ({error})"
NO_ADDRESS = "no address to probe (the node derived none)"


def connect(address: str, port: int, timeout: float) -> None:
    """Open and close one TCP connection; raises OSError (socket.timeout included) when it cannot."""
    with socket.create_connection((address, port), timeout=timeout):
        pass


def reason(error: Exception, timeout: float) -> str:
    if isinstance(error, (socket.timeout, TimeoutError)):
        return TIMED_OUT.format(timeout=timeout)
    if isinstance(error, ConnectionRefusedError) or getattr(error, "errno", None) == errno.ECONNREFUSED:
        return REFUSED
    if isinstance(error, socket.gaierror):
        return UNRESOLVED.format(error=error.strerror or error)
    if isinstance(error, OSError):
        return UNREACHABLE.format(error=error.strerror or error)
    # e.g. UnicodeError from an address with an empty label (198.18.1..12): one row says so, the others stand
    return NOT_AN_ADDRESS.format(error=error)


def probe(item: dict, timeout: float, opener: t.Callable[[str, int, float], None] = connect) -> dict:
    """One probe: the item as given, with `open` and, where it did not open, `error`."""
    if not item.get("address"):
        return dict(item, open=False, error=NO_ADDRESS)
    try:
        opener(str(item["address"]), int(item["port"]), timeout)
    except (OSError, ValueError) as error:
        return dict(item, open=False, error=reason(error, timeout))
    return dict(item, open=True, error="")


def reach(items: t.Sequence[dict], timeout: float,
          opener: t.Callable[[str, int, float], None] = connect) -> list[dict]:
    """Every probe at once, the results in the order given (the report's rows keep the port registry's order)."""
    if not items:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(MAX_THREADS, len(items))) as pool:
        return list(pool.map(lambda item: probe(item, timeout, opener), items))
