"""A node whose Docker engine does not answer is named, with its socket and the first fix (F26), not left to a Docker
module's raw "Error connecting"."""

from __future__ import annotations


def test_a_node_whose_engine_does_not_answer_is_named_with_its_socket_and_the_fix(lab, tmp_path):
    before = lab.containers()
    # dockerd keeps running; its socket is where no client finds it, as after a failed start
    lab.node("spark-2", "mv", "/var/run/docker.sock", "/var/run/docker.sock.away")
    try:
        # link: preflight's read asks the engine first and keeps no answer it did not get; validate: its one read of
        # the node asks the engine and reads nothing of Docker's where it does not answer
        for tags in ("link", "docker_runtime", "validate"):
            output = lab.expect_failure(
                tmp_path, ["[F26] spark-2: the Docker engine does not answer at unix:///var/run/docker.sock",
                           "`systemctl status docker`"], "--tags", tags)
            assert "[F26] spark-1" not in output
            assert "Error connecting" not in output, output[-3000:]
    finally:
        lab.node("spark-2", "mv", "/var/run/docker.sock.away", "/var/run/docker.sock")
    assert lab.containers() == before
