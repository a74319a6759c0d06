# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the troubleshooting guide lives: every message with an F-number links its section (URL#f<n>). The one
place it is written; vllm_cluster_troubleshooting_url says the same for the playbooks (a unit test keeps them
equal). Private to the collection."""

from __future__ import annotations

TROUBLESHOOTING = "https://github.com/inferops/vllm_cluster/blob/main/docs/troubleshooting.md"
