# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: supervisor_report
short_description: What validate and diagnose say of the supervisor's record (F28)
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - From the head's supervisor record (C(vllm_cluster_supervisor_dir)/state.json, read with C(node_state)), a
    problem and the lines to show. Giving up at the cap (every rank stopped) is a problem (F28) unless this run
    starts the group again (C(starts_group)); so is a record whose last check is older than three intervals (its
    container does not check). Restarts within the window are shown.
options:
  _input:
    description: The record, parsed (null where there is none).
    type: raw
    required: true
  host:
    description: The head's inventory name.
    type: str
    required: true
  settings:
    description: The supervisor's settings (interval, deadline, window ...), as the role writes them.
    type: dict
    required: true
  now:
    description: The node's clock (C(node_state)'s C(clock)), seconds since the epoch.
    type: float
    required: true
  path:
    description: Where the record is on the head.
    type: str
    required: true
  container:
    description: The supervisor's container name.
    type: str
    required: true
  started_at:
    description: When the head's vLLM container last started (C(node_state)'s C(started_at)); empty where unknown.
      Giving up before that start is no problem any more.
    type: str
    default: ""
  starts_group:
    description: Whether this run goes on to start vLLM (filter C(serving_play_follows)), which resets the
      supervisor's count; giving up is then no problem of this run.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Report the supervisor
  ansible.builtin.debug:
    msg: >-
      {{ node.records[path] | inferops.vllm_cluster.supervisor_report(inventory_hostname, settings, node.clock,
           path, 'vllm-cluster-supervisor') }}
"""

RETURN = r"""
_value:
  description: "{problem: sentence or empty, lines: [what to show]}."
  type: dict
"""

import calendar
import time

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._supervisor import MESSAGES, Settings, report


def supervisor_report(record, host, settings, now, path, container, starts_group=False, started_at=""):
    found = report(host, record, float(now), Settings.of(settings), path, container, TROUBLESHOOTING,
                   _epoch(started_at))
    if found["problem"] and starts_group and found["problem"].startswith("[F28]"):
        return {"problem": "", "lines": found["lines"] + [MESSAGES["RESET"].format(host=host)]}
    return found


def _epoch(started_at):
    """Docker's StartedAt (RFC 3339, nanoseconds, Z) in seconds since the epoch; None where it never started."""
    text = str(started_at or "")
    if not text or text.startswith("0001-"):
        return None
    day, _sep, rest = text.partition("T")
    clock = rest.rstrip("Z").split("+")[0].split(".")[0]
    try:
        return calendar.timegm(time.strptime(f"{day} {clock}", "%Y-%m-%d %H:%M:%S"))
    except ValueError:
        return None


class FilterModule:
    def filters(self):
        return {"supervisor_report": supervisor_report}
