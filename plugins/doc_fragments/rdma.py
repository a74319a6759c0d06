# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Options the F23 filters (hca_problems, hca_link_problems) share."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods

    # What NCCL is told to use, and whom the messages name.
    DOCUMENTATION = r"""
options:
  spec:
    description: The C(NCCL_IB_HCA) value (C(vllm_cluster_nccl_ib_hca)).
    type: str
    required: true
  host:
    description: The host, for the messages.
    type: str
    required: true
"""
