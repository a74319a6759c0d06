# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a node's Docker engine answers, from `docker version` run there, and what to say when it does not (F26):
every container of the cluster runs in it, and the Docker modules' own error ("Error connecting: ...") names neither
the node nor the fix. Private to the collection."""

from __future__ import annotations

import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import TIMED_OUT
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
# How long `docker version` may take (coreutils' timeout, exit 124): a hung dockerd after a crash is an answer too.
TIMEOUT = 30

MESSAGES = {
    "NO_ANSWER": "[F26] {host}: the Docker engine does not answer at {socket} ({error}): every container of the "
                 "cluster runs in it, so nothing there can be read or changed. Fix: on {host}, `systemctl status "
                 "docker` first (then `journalctl -u docker -n 50`); after a reboot or a crash a stale "
                 "/var/run/docker.pid or docker.sock keeps dockerd from starting. See {doc}#f26",
    "HUNG": "[F26] {host}: the Docker engine at {socket} did not answer within {timeout} s (dockerd hung): every "
            "container of the cluster runs in it. Fix: on {host}, `systemctl status docker` first (then `journalctl -u "
            "docker -n 50`), `systemctl restart docker` if it is stuck. See {doc}#f26",
    "NO_ACCESS": "[F26] {host}: the connecting user may not use the Docker engine at {socket} ({error}): the "
                 "collection drives Docker as root. Fix: connect with become (ansible_become: true) or as root. See "
                 "{doc}#f26",
    "NO_CLI": "[F26] {host}: there is no docker command on the node ({error}): every container of the cluster runs in "
              "Docker. Fix: let docker_runtime install the engine (docker_runtime_manage_engine: true, Debian and "
              "Ubuntu) or install it yourself, then run site.yml. See {doc}#f26",
}


# module.run_command: argv -> (rc, stdout, stderr). A string: nodes may run Python 3.8.
Run = "t.Callable[[t.List[str]], t.Tuple[int, str, str]]"


def version_argv(docker: str, socket: str = DEFAULT_SOCKET) -> list[str]:
    """`docker version` as _common's engine entry point asks it (roles/_common/tasks/engine.yml): bounded by
    timeout(1), by default at the socket the Docker modules use."""
    return ["timeout", "--kill-after=5", str(TIMEOUT), docker, "--host", socket, "version", "--format",
            "{{.Server.Version}}"]


def ask(run: Run, docker: str | None, socket: str = DEFAULT_SOCKET) -> dict[str, t.Any]:
    """The engine's answer from inside a module, shaped as the command module registers it ({rc, stdout, stderr}):
    what state() reads; `answers` beside it for a caller's condition (answered()). No docker CLI: no rc, as a
    command that could not start."""
    if not docker:
        read: dict[str, t.Any] = {"rc": None, "stdout": "", "stderr": "", "msg": "No such file or directory: docker"}
    else:
        rc, out, err = run(version_argv(docker, socket))
        read = {"rc": rc, "stdout": out, "stderr": err}
    return dict(read, answers=answered(read))


def answered(read: t.Mapping[str, t.Any]) -> bool:
    """Whether the engine answered with its version (state()'s `answers`, without the message)."""
    return read.get("rc") == 0 and bool(str(read.get("stdout") or "").strip())


def unanswered_words(read: t.Mapping[str, t.Any]) -> str:
    """What an engine that did not answer said (its stderr), else how `docker version` ended (hung: named so)."""
    said = str(read.get("stderr") or read.get("msg") or "").strip()
    if said:
        return said
    hung = " (no answer within the bound: dockerd hung?)" if read.get("rc") == TIMED_OUT else ""
    return f"`docker version` exited {read.get('rc')}{hung}"


# What the CLI says when no engine answers, in the wordings of Docker 20-27 and of 28 and later.
NO_ANSWER = re.compile(r"(?i)cannot connect to the docker daemon|failed to connect to the docker API")
# What it says to a user outside the docker group.
NO_ACCESS = re.compile(r"(?i)permission denied")


def _socket(text: str) -> str:
    # the CLI names where it looked: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is ...",
    # "failed to connect to the docker API at unix:///var/run/docker.sock; check ...", "... daemon socket at ...: ..."
    found = re.search(r"(?:daemon(?: socket)?|docker API) at (\S+?)[.;:]?(?:\s|$)", text)
    return found.group(1) if found else DEFAULT_SOCKET


def state(read: t.Mapping[str, t.Any], host: str, doc: str = TROUBLESHOOTING) -> dict[str, t.Any]:
    """{answers, version, problem} from the registered result of `docker version --format {{.Server.Version}}`
    (command module, failed_when false). A result without rc (the command could not start) counts as no CLI."""
    rc = read.get("rc")
    if answered(read):
        return {"answers": True, "version": str(read["stdout"]).strip(), "problem": ""}
    error = " ".join(str(read.get("stderr") or read.get("msg") or "no output").split())[:300]
    if rc is None or rc == 127 or "No such file or directory" in str(read.get("msg") or ""):
        return {"answers": False, "version": "", "problem": MESSAGES["NO_CLI"].format(host=host, error=error, doc=doc)}
    if rc == TIMED_OUT:
        problem = MESSAGES["HUNG"].format(host=host, socket=DEFAULT_SOCKET, timeout=TIMEOUT, doc=doc)
    elif NO_ACCESS.search(error):
        problem = MESSAGES["NO_ACCESS"].format(host=host, socket=_socket(error), error=error, doc=doc)
    else:
        problem = MESSAGES["NO_ANSWER"].format(host=host, socket=_socket(error), error=error, doc=doc)
    return {"answers": False, "version": "", "problem": problem}
