# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The attributes of the collection's modules that only read (a node's devices, containers, files)."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods

    # They change nothing, so check mode runs them as a real run would and there is nothing to diff.
    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
    description: Read-only.
  diff_mode:
    support: none
    description: Nothing to diff.
"""
