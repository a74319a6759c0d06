# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The few Docker calls the collection's modules make (ray_cluster_check, link_inputs, ...), through the docker CLI
every node running the cluster has.

Not the Docker SDK for Python: Ubuntu 24.04's packaged SDK (DGX OS) fails against its own urllib3
("unexpected keyword argument 'chunked'"), and a node should need nothing the engine does not bring.
Every call is bounded by coreutils' timeout, so a hung dockerd ends as a message. Private to the collection.
"""

from __future__ import annotations

import json
import re
import subprocess
import typing as t

# timeout(1) exits 124 when the command ran out of time.
TIMED_OUT = 124
# What the engine says of a name it does not know ("Error response from daemon: No such container: x", "Error: No
# such object: x", "... No such image: x"). Not "no such" alone: a CLI that cannot reach the engine's socket says
# "... connect: no such file or directory" (Docker 28), which is no answer about the container.
_ABSENT = {"container": re.compile(r"no such (container|object)", re.I), "image": re.compile(r"no such (image|object)", re.I)}
# Seconds an engine that answers at all takes, at most, to say whether it runs (`docker version`, a first inspect).
ENGINE_ANSWER_TIMEOUT = 30


class DockerError(Exception):
    """A docker CLI call failed; the message says which and why."""


class DockerCli:
    def __init__(self, run_command: t.Callable[..., t.Any], docker: str, host: str, timeout: int) -> None:
        self._run_command = run_command
        self._base = [docker, "--host", host]
        self.host = host
        self.timeout = int(timeout)

    def _run(self, argv: list[str], timeout: int | None = None) -> tuple[int, str, str]:
        limit = self.timeout if timeout is None else int(timeout)
        rc, out, err = self._run_command(["timeout", "--kill-after=5", str(limit)] + self._base + argv)
        if rc == TIMED_OUT:
            command = " ".join(argv[:2] if argv[0] in ("container", "image") else argv[:1])
            raise DockerError(f"`docker {command}` did not answer within {limit} s (dockerd at {self.host} hung?)")
        return rc, out, err

    def ping(self) -> str:
        """The engine's version; DockerError when no engine answers at the host."""
        rc, out, err = self._run(["version", "--format", "{{.Server.Version}}"],
                                 timeout=min(self.timeout, ENGINE_ANSWER_TIMEOUT))
        if rc != 0 or not out.strip():
            raise DockerError((err or out).strip().splitlines()[-1] if (err or out).strip() else f"docker version exited {rc}")
        return out.strip()

    def inspect(self, container: str, timeout: int | None = None) -> dict[str, t.Any] | None:
        """The container's `docker inspect` document; None when no such container exists."""
        rc, out, err = self._run(["container", "inspect", container], timeout=timeout)
        if rc != 0:
            if _ABSENT["container"].search(err or ""):
                return None
            raise DockerError(f"`docker container inspect {container}` exited {rc}: {(err or out).strip()}")
        documents = json.loads(out or "[]")
        return documents[0] if documents else None

    def image_id(self, image: str) -> str:
        """The image's ID; '' when the engine has no such image."""
        rc, out, err = self._run(["image", "inspect", "--format", "{{.Id}}", image])
        if rc != 0:
            if _ABSENT["image"].search(err or ""):
                return ""
            raise DockerError(f"`docker image inspect {image}` exited {rc}: {(err or out).strip()}")
        return out.strip()

    def popen_exec(self, container: str, argv: list[str], timeout: int) -> subprocess.Popen:
        """Start argv in the running container with stdin and stdout as text pipes (stderr joined to stdout), for a
        conversation; the whole of it is bounded by timeout seconds."""
        return subprocess.Popen(["timeout", "--kill-after=5", str(int(timeout))] + self._base + ["exec", "-i", container]
                                + list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace")

    def exec(self, container: str, argv: list[str], timeout: int | None = None) -> tuple[int, str, str]:
        """Run argv in the running container: (exit code, stdout, stderr)."""
        return self._run(["exec", container] + list(argv), timeout=timeout)


def status(document: t.Mapping[str, t.Any] | None) -> str:
    """A container's state as `docker ps` names it (running, exited, ...); 'absent' for no container."""
    if document is None:
        return "absent"
    return str((document.get("State") or {}).get("Status") or "unknown")
