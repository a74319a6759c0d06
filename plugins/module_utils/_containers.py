# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the states of two containers say about each other. Private to the collection."""

from __future__ import annotations

import datetime
import re
import typing as t


def ended_under(state: t.Mapping[str, t.Any] | None, host_state: t.Mapping[str, t.Any] | None) -> bool:
    """Whether a container ended on its own while the container it depends on kept running.

    Both arguments are `docker inspect`'s State of containers on the same host (one clock), e.g. the
    vLLM server and the Ray head under it. The collection stops vLLM together with Ray or before it,
    so a vLLM that finished after the head's current start, with the head still running, ended by
    itself (a crash, or a rank it needed died).
    """
    if not state or not host_state or state.get("Running") or not host_state.get("Running"):
        return False
    finished = state.get("FinishedAt") or ""
    # Docker's "never finished" is year 0001
    if not finished or finished.startswith("0001-"):
        return False
    return finished > (host_state.get("StartedAt") or "~")


# Two hosts' clocks are read a moment apart: differences within this many seconds decide nothing.
CLOCK_MARGIN = 5.0


def docker_time(stamp: str | None) -> float | None:
    """Seconds since the epoch of a Docker timestamp (RFC 3339, up to nanoseconds); None for none or year 0001."""
    if not stamp or stamp.startswith("0001-"):
        return None
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", stamp)
    if not match:
        return None
    whole, fraction, zone = match.groups()
    parsed = datetime.datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
    return parsed.timestamp() + float("0." + (fraction or "0"))


def started_before(state: t.Mapping[str, t.Any] | None, other_state: t.Mapping[str, t.Any] | None,
                   clock_offset: float = 0.0) -> bool:
    """Whether a container started before another one on another host did, clearly.

    clock_offset: the other host's clock minus this host's, read at the same moment. A Ray worker started
    before the head's current start belongs to a cluster that no longer exists; comparing the two hosts'
    timestamps as they stand, a worker whose clock runs behind looked older and was restarted needlessly.
    """
    start = docker_time((state or {}).get("StartedAt"))
    other = docker_time((other_state or {}).get("StartedAt"))
    if start is None or other is None:
        return False
    return start + clock_offset < other - CLOCK_MARGIN
