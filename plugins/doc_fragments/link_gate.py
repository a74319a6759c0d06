# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Options the link gate's filters (link_gate_container, link_gate_plan, link_gate_verdict) share."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods

    # One dict the role builds once (roles/link_gate/vars/main.yml), so the three filters read the same settings.
    DOCUMENTATION = r"""
options:
  settings:
    description: >-
      The gate's settings (the link_gate role's C(_link_gate_settings)); C(hosts) (the head first), C(address),
      C(port), C(backend) (nccl or gloo), C(max_bytes), C(iterations), C(budget), C(connect_timeout),
      C(min_bus_bandwidth), C(rdma), C(image) and C(guide).
    type: dict
    required: true
"""
