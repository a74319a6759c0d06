# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action of module node_state (plugins/modules/node_state.py documents it): its read run by the node's Python
directly where Ansible would pipeline it (plugin_utils/_direct_action.py), the module otherwise. The collection reads
a node with it a dozen times a run: ~0.25 s of the node's CPU each that Ansible's module runtime costs."""

from __future__ import annotations

from ansible_collections.inferops.vllm_cluster.plugins.plugin_utils._direct_action import DirectAction


class ActionModule(DirectAction):
    MODULE = "inferops.vllm_cluster.node_state"
    ENTRY = "_node_state"
