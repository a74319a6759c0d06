"""F13: RemoveIPC matters only where the containers run as the login user (a rootless dockerd)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._logind import (
    logind_message,
    logind_verdict,
    remove_ipc_in_effect,
)

STOCK = "# /etc/systemd/logind.conf\n[Login]\n#RemoveIPC=yes\n"
OFF = STOCK + "\n# /etc/systemd/logind.conf.d/50-ipc.conf\n[Login]\nRemoveIPC=no\n"


@pytest.mark.parametrize(
    "case, config, expected",
    [
        ("stock: commented out, the default applies", STOCK, True),
        ("turned off in a drop-in", OFF, False),
        ("the last setting wins", OFF + "[Login]\nRemoveIPC=yes\n", True),
        ("spelled false, with spaces", "[Login]\n RemoveIPC = false\n", False),
        ("no configuration at all", "", True),
    ],
)
def test_remove_ipc_in_effect(case, config, expected):
    assert remove_ipc_in_effect(config) is expected, case


@pytest.mark.parametrize(
    "case, config, uid, linger, rootless, verdict",
    [
        ("a Spark's login user, rootful Docker (stock DGX OS): a note, never a block", STOCK, 1000, False, False, "note"),
        ("the same user with rootless Docker: the containers' IPC is theirs", STOCK, 1000, False, True, "fail"),
        ("rootless but lingering", STOCK, 1000, True, True, "ok"),
        ("rootless, RemoveIPC off", OFF, 1000, False, True, "ok"),
        ("root", STOCK, 0, False, True, "ok"),
        ("a system user", STOCK, 999, False, True, "ok"),
    ],
)
def test_logind_verdict(case, config, uid, linger, rootless, verdict):
    assert logind_verdict(config, uid, linger, rootless) == verdict, case


@pytest.mark.parametrize(
    "verdict, start, end",
    [
        ("fail", "[F13] spark-1: systemd-logind RemoveIPC=yes applies to ubuntu (uid 1000, no linger) and dockerd runs "
                 "rootless", f"`loginctl enable-linger ubuntu`. See {TROUBLESHOOTING}#f13"),
        ("note", "NOTE [F13] spark-1: RemoveIPC=yes applies to ubuntu (uid 1000), but a rootful dockerd",
         "nothing to fix for the cluster."),
        ("ok", "", ""),
    ],
)
def test_logind_message(verdict, start, end):
    message = logind_message(verdict, "spark-1", "ubuntu", 1000)
    assert message.startswith(start) and message.endswith(end), message
    assert bool(message) is bool(start)
