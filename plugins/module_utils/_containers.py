# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the states of two containers on one host say about each other. Private to the collection."""

from __future__ import annotations

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
