# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether systemd-logind's RemoveIPC can take vLLM's semaphores on a node (F13). Private to the collection.

logind removes the System V IPC objects of a non-system user (uid >= 1000) without linger when that user's last
session ends. Ray and vLLM run in containers: under a rootful dockerd their processes are root's, whoever
deployed them, and RemoveIPC never touches them. Only a rootless dockerd runs them as the login user.
"""

from __future__ import annotations

import re

_REMOVE_IPC = re.compile(r"^\s*RemoveIPC\s*=\s*(\S*)\s*$", re.IGNORECASE)
_FALSE = ("no", "false", "off", "0")
# systemd's default SYS_UID_MAX: uids above it are regular (login) users.
SYSTEM_UID_MAX = 999


def remove_ipc_in_effect(config: str) -> bool:
    """RemoveIPC as `systemd-analyze cat-config systemd/logind.conf` prints it: the last setting wins; yes by default."""
    values = [m.group(1) for m in map(_REMOVE_IPC.match, (config or "").splitlines()) if m]
    return not values or values[-1].lower() not in _FALSE


def logind_verdict(config: str, uid: int, linger: bool, rootless: bool) -> str:
    """'fail' when RemoveIPC can remove the containers' IPC, 'note' when it applies to the user but not to the
    containers (a rootful dockerd), 'ok' when it does not apply at all."""
    if not remove_ipc_in_effect(config) or int(uid) <= SYSTEM_UID_MAX or linger:
        return "ok"
    return "fail" if rootless else "note"
