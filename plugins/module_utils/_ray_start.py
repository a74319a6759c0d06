# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the Ray layers (ray_head, ray_worker) say when `ray start` did not come up within its bound: the failing
process's own last lines, which name the cause better than any guess (the checks of Ray's live view, with their
failure modes, are _ray_checks.py's). Private to the collection."""

from __future__ import annotations

MESSAGES = {
    "HEAD_DID_NOT_START": (
        "{host}: the Ray head's GCS did not answer on {address} within {timeout} s. Last lines of `docker logs "
        "{container}`: {log}"
    ),
    "WORKER_DID_NOT_START": (
        "{host}: `ray start --address={head} --node-ip-address={ip}` did not report success within {timeout} s. Last "
        "lines of `docker logs {container}`: {log}"
    ),
}
