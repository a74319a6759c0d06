"""Preflight's one read of who holds a node's ports: the cluster's containers that run, what listens, and the
collection's staging server between two reads of the ports."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _port_holders, _weights_lock

SS_BEFORE = "LISTEN 0 128 0.0.0.0:29510 0.0.0.0:*\n"
SS_AFTER = "LISTEN 0 128 0.0.0.0:8000 0.0.0.0:*\n"


class Node:
    """docker and ss as the module runs them: each call answered from a script, every argv kept (`docker version`
    runs under timeout(1))."""

    def __init__(self, inspect=(0, "", ""), ss=((0, SS_BEFORE, ""), (0, SS_AFTER, "")), version=(0, "28.5.1\n", "")):
        self.inspect, self.ss, self.version, self.calls = inspect, list(ss), version, []

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[0] == "timeout":
            return self.version
        return self.inspect if argv[0] == "docker" else self.ss.pop(0)


@pytest.mark.parametrize("case, inspect, running, error", [
    ("every container runs", (0, "/ray true\n/vllm true\n", ""), ["ray", "vllm"], ""),
    ("one stopped, one absent", (1, "/ray false\n", "Error: No such object: vllm"), [], "Error: No such object: vllm"),
    ("docker refuses the user", (1, "", "permission denied while trying to connect to the Docker daemon socket"),
     [], "permission denied while trying to connect to the Docker daemon socket"),
    ("the engine does not answer", (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."),
     [], "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."),
])
def test_running_containers(case, inspect, running, error):
    node = Node(inspect=inspect)
    assert _port_holders.running_containers(node, "docker", ["ray", "vllm"]) == {"running": running, "error": error}, case


def test_no_docker_yet_is_nothing_running_and_no_complaint():
    node = Node()
    assert _port_holders.running_containers(node, None, ["ray"]) == {"running": [], "error": ""}
    assert node.calls == []


def test_the_head_reads_the_ports_before_and_after_looking_for_the_staging_server(monkeypatch):
    seen = []
    monkeypatch.setattr(_weights_lock, "holder", lambda lock, host: seen.append((lock, host)) or 4242)
    node = Node(inspect=(0, "/ray true\n", ""))
    result = _port_holders.read(node, "docker", "ss", ["ray"], "/cache/inferops-weights/server.lock", "spark-1", 0)
    assert result == {"running": ["ray"], "docker_error": "", "staging_server": {"pid": 4242, "reason": ""},
                      "engine": {"rc": 0, "stdout": "28.5.1\n", "stderr": "", "answers": True},
                      "listening": SS_BEFORE, "listening_after": SS_AFTER}
    assert seen == [("/cache/inferops-weights/server.lock", "spark-1")]
    assert [argv[0] for argv in node.calls] == ["timeout", "docker", "ss", "ss"]


def test_a_worker_reads_the_ports_once():
    node = Node()
    result = _port_holders.read(node, "docker", "ss", [], "", "spark-2", 0)
    assert result["listening"] == result["listening_after"] == SS_BEFORE
    assert result["staging_server"] == {"pid": 0, "reason": ""} and [argv[0] for argv in node.calls] == ["timeout", "ss"]


# The engine's answer, asked as roles/_common/tasks/engine.yml asks it, read by the engine_state filter.
@pytest.mark.parametrize("case, docker, version, engine", [
    ("it answers", "docker", (0, "28.5.1\n", ""), {"rc": 0, "stdout": "28.5.1\n", "stderr": "", "answers": True}),
    ("it does not", "docker", (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."),
     {"rc": 1, "stdout": "", "stderr": "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.",
      "answers": False}),
    ("no docker CLI", None, None, {"rc": None, "stdout": "", "stderr": "", "msg": "No such file or directory: docker",
                                   "answers": False}),
])
def test_the_engine_is_asked_as_the_f26_check_asks_it(case, docker, version, engine):
    node = Node(version=version)
    assert _port_holders.read(node, docker, "ss", [], "", "spark-2", 0)["engine"] == engine, case
    asked = [argv for argv in node.calls if argv[0] == "timeout"]
    assert asked == ([["timeout", "--kill-after=5", "30", "docker", "--host", "unix:///var/run/docker.sock", "version",
                       "--format", "{{.Server.Version}}"]] if docker else []), case


def test_a_lock_the_user_may_not_read_is_said_not_failed(monkeypatch):
    def refuse(lock, host):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(_weights_lock, "holder", refuse)
    node = Node()
    assert _port_holders.read(node, None, "ss", [], "/cache/server.lock", "spark-1", 1000)["staging_server"] == {
        "pid": 0, "reason": "not checked: uid 1000 may not read /cache/server.lock"}


def test_ss_failing_is_an_error_naming_the_host():
    with pytest.raises(OSError, match="spark-2: `ss -Hltn` failed: ss: not permitted"):
        _port_holders.read(Node(ss=((1, "", "ss: not permitted\n"),)), None, "ss", [], "", "spark-2", 0)


@pytest.mark.parametrize("case, version, error", [
    ("stopped", (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n"),
     "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"),
    ("refused", (1, "", "permission denied while trying to connect to the Docker daemon socket\n"),
     "permission denied while trying to connect to the Docker daemon socket"),
    ("hung", (124, "", ""), "`docker version` exited 124 (no answer within the bound: dockerd hung?)"),
])
def test_an_engine_that_does_not_answer_is_not_asked_again(case, version, error):
    # its words stand for docker inspect's (preflight tells "permission denied" and "cannot connect" from them)
    node = Node(version=version)
    result = _port_holders.read(node, "docker", "ss", ["ray"], "", "spark-2", 0)
    assert (result["running"], result["docker_error"]) == ([], error), case
    assert [argv[0] for argv in node.calls] == ["timeout", "ss"], case
