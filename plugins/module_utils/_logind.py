# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether systemd-logind's RemoveIPC can take vLLM's semaphores on a node (F13). Private to the collection.

logind removes the System V IPC objects of a non-system user (uid >= 1000) without linger when that user's last
session ends. Ray and vLLM run in containers: under a rootful dockerd their processes are root's, whoever
deployed them, and RemoveIPC never touches them. Only a rootless dockerd runs them as the login user.
"""

from __future__ import annotations

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

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


# docs/troubleshooting.md quotes them; tests/unit/test_troubleshooting_guide.py keeps both in step.
MESSAGES = {
    "F13": "[F13] {host}: systemd-logind RemoveIPC=yes applies to {user} (uid {uid}, no linger) and dockerd runs "
           "rootless, as that user: vLLM's semaphores vanish when this SSH session closes and the head hangs. Fix: add "
           "RemoveIPC=no to /etc/systemd/logind.conf.d/ and restart systemd-logind, or `loginctl enable-linger "
           "{user}`. See {doc}#f13",
    "F13_NOTE": "NOTE [F13] {host}: RemoveIPC=yes applies to {user} (uid {uid}), but a rootful dockerd runs Ray and "
                "vLLM as root, which it never touches: nothing to fix for the cluster.",
}


def logind_message(verdict: str, host: str, user: str, uid: int) -> str:
    """What preflight says of logind_verdict's answer: F13's sentence for 'fail', its note for 'note', '' for 'ok'."""
    key = {"fail": "F13", "note": "F13_NOTE"}.get(verdict)
    return MESSAGES[key].format(host=host, user=user, uid=uid, doc=TROUBLESHOOTING) if key else ""
