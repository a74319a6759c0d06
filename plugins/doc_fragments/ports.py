# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Options the port registry's filters (cluster_ports, port_probes) share."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods

    # Which rows of the registry apply: the backend's and, while weights are staged, the staging server's.
    DOCUMENTATION = r"""
options:
  traits:
    description: C(vllm_cluster_backend_traits).
    type: dict
    required: true
  weights_staged:
    description: C(vllm_cluster_weights_staged) (the staging server's port).
    type: bool
    default: false
"""
