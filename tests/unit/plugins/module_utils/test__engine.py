"""Whether a node's Docker engine answers, from `docker version` run there (F26)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _engine

REFUSED = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"


@pytest.mark.parametrize("case, read, answers, socket", [
    ("answers", {"rc": 0, "stdout": "26.1.5\n", "stderr": ""}, True, None),
    ("socket gone or dockerd down", {"rc": 1, "stdout": "", "stderr": REFUSED}, False, "unix:///var/run/docker.sock"),
    ("another socket (DOCKER_HOST)", {"rc": 1, "stdout": "", "stderr": "Cannot connect to the Docker daemon at "
                                                                       "tcp://127.0.0.1:2375. Is the docker daemon "
                                                                       "running?"}, False, "tcp://127.0.0.1:2375"),
    ("permission denied, where the CLI says no daemon", {"rc": 1, "stdout": "", "stderr": "permission denied while "
                                                         "trying to connect to the Docker daemon socket"},
     False, _engine.DEFAULT_SOCKET),
    ("a client that answers alone is no engine", {"rc": 0, "stdout": "", "stderr": ""}, False, _engine.DEFAULT_SOCKET),
])
def test_the_engine_answers_or_the_node_and_socket_are_named(case, read, answers, socket):
    found = _engine.state(read, "spark-2", "GUIDE")
    assert found["answers"] is answers, case
    if answers:
        assert found == {"answers": True, "version": "26.1.5", "problem": ""}
    else:
        assert found["problem"].startswith(f"[F26] spark-2: the Docker engine does not answer at {socket} ("), case
        assert "`systemctl status docker`" in found["problem"] and found["problem"].endswith("See GUIDE#f26")


@pytest.mark.parametrize("read", [
    {"msg": "[Errno 2] No such file or directory: b'docker'", "rc": 2},
    {"msg": "[Errno 2] No such file or directory: b'docker'"},
    {"rc": 127, "stderr": "sh: docker: not found"},
])
def test_a_node_without_the_docker_command_is_told_to_install_it(read):
    found = _engine.state(read, "spark-3", "GUIDE")
    assert not found["answers"]
    assert found["problem"].startswith("[F26] spark-3: there is no docker command on the node (")
    assert "docker_runtime_manage_engine: true" in found["problem"]
