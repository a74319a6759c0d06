# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Options the weights staging modules (model_snapshot, model_fetch, model_serve) share."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods

    # Every staging module names an inventory host in its messages.
    DOCUMENTATION = r"""
options:
  host:
    description: The inventory host the messages name (the node's own name when empty).
    type: str
    default: ""
"""

    # How much of what a node already holds is hashed again (model_snapshot, model_fetch).
    VERIFY = r"""
options:
  verify:
    description:
      - C(fast) reuses a file's kept sha256 while its size and modification time are unchanged (a no-op run reads
        metadata only; it trusts that nothing rewrote a file and set its time back).
      - C(full) hashes every file again (C(model_stage_verify)).
    type: str
    choices: [fast, full]
    default: fast
"""
