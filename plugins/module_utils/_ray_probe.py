# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How ray_cluster_check asks Ray itself: a small program (_ray_probe_program.py) run by the Python that has Ray.

Ray lives in the node's container, so the probe runs there (docker exec) and prints one JSON
line; with no container it runs with the local interpreter. Private to the collection.
"""

from __future__ import annotations

import inspect
import json
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _ray_probe_program

RESULT_MARKER = "RAY_CLUSTER_CHECK_RESULT="

# The program itself is a Python file of its own (linted, and unit-tested as it runs); its source is what runs
# there, under `python -c`.
PROBE_SOURCE = inspect.getsource(_ray_probe_program)


class ProbeError(Exception):
    """The probe could not run or did not answer; the message says where and why."""


# Seconds the probe may take beyond its own waits: Python and Ray's import, ray.init, the reply.
PROBE_GRACE = 60
# How the probe's end by SIGALRM (its deadline) reads: docker exec's 128 + 14, or run_command's -14.
_DEADLINE_CODES = (142, -14)


def with_limit(params: t.Mapping[str, t.Any], waits: int) -> dict[str, t.Any]:
    """The probe's parameters with its deadline: its own waits (seconds) plus PROBE_GRACE."""
    return dict(params, limit=max(0, int(waits)) + PROBE_GRACE)


def parse_output(stdout: str, stderr: str, rc: int, where: str, limit: int = 0) -> dict[str, t.Any]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER):])
    if rc in _DEADLINE_CODES and limit:
        raise ProbeError(
            f"the Ray probe in {where} did not finish within its deadline of {limit} s: Ray's GCS accepted the "
            "connection but did not answer (a stopped or overloaded gcs_server). Fix: read `docker logs` of the Ray "
            "head's container; restart it with site.yml --tags ray_head -e vllm_cluster_restart=true"
        )
    tail = " | ".join((stderr or stdout).strip().splitlines()[-8:])
    raise ProbeError(f"the Ray probe in {where} exited {rc} without a result: {tail or 'no output'}")


def probe_args(params: t.Mapping[str, t.Any]) -> list[str]:
    return ["-c", PROBE_SOURCE, json.dumps(dict(params, marker=RESULT_MARKER))]


# How timeout(1) reads when the whole session ran out of its bound (137, a KILL, may as well be the kernel's).
SESSION_TIMED_OUT = (124,)


class ProbeSession:
    """One probe process inside a running container that answers every request of a check (table, dry-run, vLLM's
    ranks) in turn: the first through its arguments, the next ones on its stdin.

    popen(argv) starts `docker exec -i` (or a local interpreter) with stdin and stdout as pipes and stderr into stdout:
    Ray's own lines go around the result's marker, and nothing can fill a pipe nobody reads.
    """

    def __init__(self, popen: t.Callable[[list[str]], t.Any], python: str, where: str) -> None:
        self._popen = popen
        self._python = python
        self._where = where
        self._process: t.Any = None
        self._limit = 0

    def ask(self, params: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
        self._limit = int(params.get("limit", 0))
        if self._process is None:
            self._process = self._popen([self._python] + probe_args(dict(params, session=True)))
        else:
            try:
                self._process.stdin.write(json.dumps(dict(params)) + "\n")
                self._process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return self._ended([])
        lines = []
        for line in iter(self._process.stdout.readline, ""):
            if line.startswith(RESULT_MARKER):
                try:
                    return json.loads(line[len(RESULT_MARKER):])
                except ValueError as exc:
                    # Ray's own stderr (joined to stdout) can land inside a long result line
                    self.close()
                    raise ProbeError(f"the Ray probe in {self._where} answered a garbled result ({exc}): "
                                     f"{line[:200]!r}") from exc
            lines.append(line)
        return self._ended(lines)

    def _ended(self, lines: list[str]) -> dict[str, t.Any]:
        # what the program wrote before it ended (its traceback), when the request could not even be sent
        lines += self._process.stdout.readlines()
        rc = self._process.wait()
        self._process = None
        if rc in SESSION_TIMED_OUT:
            raise ProbeError(f"the Ray probe in {self._where} ran past the check's own bound (timeout(1) ended "
                             f"`docker exec`, exit {rc}): {' | '.join(''.join(lines).strip().splitlines()[-4:]) or 'no output'}")
        return parse_output("".join(lines), "", rc, self._where, self._limit)

    def close(self) -> None:
        if self._process is not None:
            try:
                self._process.stdin.close()
                self._process.wait(timeout=PROBE_GRACE)
            except Exception:  # pylint: disable=broad-exception-caught  # a probe that will not end is ended
                # SIGTERM first: timeout(1) passes it on to `docker exec`, which SIGKILL would orphan
                self._process.terminate()
                try:
                    self._process.wait(timeout=10)
                except Exception:  # pylint: disable=broad-exception-caught
                    self._process.kill()
                    self._process.wait()
            self._process = None


def container_session(client: t.Any, container: str, python: str, limit: int,
                      inspect_timeout: int | None = None) -> ProbeSession:
    """A ProbeSession in a running container (a _docker_cli.DockerCli), bounded as a whole by limit seconds; the
    container's state read first (bounded by inspect_timeout), which raises DockerError where the engine does not
    answer."""
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import status

    state = status(client.inspect(container, timeout=inspect_timeout))
    if state == "absent":
        raise ProbeError(
            f"container {container!r} does not exist on this host; is the Ray head deployed (site.yml --tags ray_head)?"
        )
    if state != "running":
        raise ProbeError(
            f"container {container!r} is {state}, not running; see `docker logs {container}` and re-run site.yml --tags ray_head"
        )
    return ProbeSession(lambda argv: client.popen_exec(container, argv, limit), python, f"container {container}")


def run_locally(run_command: t.Callable[..., t.Any], python: str, params: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Run the probe with a local interpreter that can import ray."""
    rc, out, err = run_command([python] + probe_args(params))
    return parse_output(out, err, rc, f"local {python}", params.get("limit", 0))
