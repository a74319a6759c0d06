# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action of module link_inputs (plugins/modules/link_inputs.py documents it): its read (what the link gate's record is
compared with, on every run that reaches the gate) run by the node's Python directly where Ansible would pipeline it
(plugin_utils/_direct_action.py), the module otherwise."""

from __future__ import annotations

from ansible_collections.inferops.vllm_cluster.plugins.plugin_utils._direct_action import DirectAction


class ActionModule(DirectAction):
    MODULE = "inferops.vllm_cluster.link_inputs"
    ENTRY = "_link_inputs"
