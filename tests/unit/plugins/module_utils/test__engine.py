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
    ("Docker 28's wording", {"rc": 1, "stdout": "", "stderr": "failed to connect to the docker API at "
                                                              "tcp://10.0.0.1:2375; check if the path is correct and if "
                                                              "the daemon is running: dial tcp: connection refused"},
     False, "tcp://10.0.0.1:2375"),
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


def test_a_user_without_the_right_to_ask_docker_is_told_so_not_that_the_engine_is_down():
    read = {"rc": 1, "stdout": "", "stderr": "permission denied while trying to connect to the Docker daemon socket at "
                                             "unix:///var/run/docker.sock: Get ...: dial unix /var/run/docker.sock: "
                                             "connect: permission denied"}
    problem = _engine.state(read, "spark-1", "GUIDE")["problem"]
    assert problem.startswith("[F26] spark-1: the connecting user may not use the Docker engine at "
                              "unix:///var/run/docker.sock (")
    assert "ansible_become: true" in problem and "stale" not in problem


def test_a_hung_engine_is_an_answer_within_the_bound():
    problem = _engine.state({"rc": _engine.TIMED_OUT, "stdout": "", "stderr": ""}, "spark-2", "GUIDE")["problem"]
    assert problem.startswith(f"[F26] spark-2: the Docker engine at {_engine.DEFAULT_SOCKET} did not answer within "
                              f"{_engine.TIMEOUT} s")


@pytest.mark.parametrize("text", [REFUSED, "failed to connect to the docker API at unix:///var/run/docker.sock; check"])
def test_both_wordings_of_no_answer_are_known(text):
    assert _engine.NO_ANSWER.search(text)


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


def test_the_role_reads_the_socket_and_the_bound_this_module_names():
    import pathlib
    import yaml
    tasks = yaml.safe_load((pathlib.Path(__file__).resolve().parents[4] / "roles" / "_common" / "tasks" /
                            "engine.yml").read_text())
    argv = tasks[0]["ansible.builtin.command"]["argv"]
    assert argv[:3] == ["timeout", "--kill-after=5", str(_engine.TIMEOUT)]
    assert argv[argv.index("--host") + 1] == _engine.DEFAULT_SOCKET


def test_a_module_asks_exactly_what_the_role_asks():
    # port_holders and node_state ask the engine inside their own call: the same command, the same reading of it
    import pathlib
    import yaml
    tasks = yaml.safe_load((pathlib.Path(__file__).resolve().parents[4] / "roles" / "_common" / "tasks" /
                            "engine.yml").read_text())
    argv = [part.replace("{{ '{{.Server.Version}}' }}", "{{.Server.Version}}")
            for part in tasks[0]["ansible.builtin.command"]["argv"]]
    assert _engine.version_argv("docker") == argv


@pytest.mark.parametrize("case, answer, answers", [
    ("its version", (0, "28.5.1\n", ""), True),
    ("exit 0 without a version", (0, "\n", ""), False),
    ("cannot connect", (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."), False),
    ("hung", (124, "", ""), False),
])
def test_a_modules_answer_reads_as_the_commands(case, answer, answers):
    asked = []
    read = _engine.ask(lambda argv: asked.append(argv) or answer, "/usr/bin/docker", "unix:///run/other.sock")
    assert asked == [_engine.version_argv("/usr/bin/docker", "unix:///run/other.sock")], case
    assert _engine.answered(read) is answers and read["answers"] is answers, case
    assert _engine.state(read, "spark-1", "GUIDE")["answers"] is answers, case


def test_no_docker_cli_in_a_module_is_no_cli():
    read = _engine.ask(lambda argv: pytest.fail("nothing to run"), None)
    assert not _engine.answered(read) and read["answers"] is False
    assert "there is no docker command on the node" in _engine.state(read, "spark-1", "GUIDE")["problem"]
