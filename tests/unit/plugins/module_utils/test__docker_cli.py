"""The docker CLI calls of ray_cluster_check, against a stand-in `docker` (a shell script) run for real through
coreutils' timeout: absent, stopped and running containers, a hung dockerd, and the probe through `docker exec`."""

from __future__ import annotations

import subprocess

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError, status
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_probe import RESULT_MARKER, ProbeError, container_session

# Answers as the real CLI does: inspect of an unknown name exits 1 with "No such container" on stderr.
FAKE_DOCKER = r"""#!/bin/sh
# Docker 28's CLI where the engine's socket is gone
gone() { echo "failed to connect to the docker API at $FAKE_GONE; check if the path is correct and if the daemon is" \
              "running: dial unix ${FAKE_GONE#unix://}: connect: no such file or directory" >&2; exit 1; }
shift 2  # --host <address>
echo "$*" >> "$CALLS"
case "$1 $2" in
  "version --format") [ -n "$FAKE_DOWN" ] && { echo "Cannot connect to the Docker daemon at $FAKE_DOWN" >&2; exit 1; }
                      echo 28.2.2 ;;
  "container inspect") [ -n "$FAKE_GONE" ] && gone
                      case "$3" in
      ray-head) echo '[{"State": {"Status": "running"}, "Args": []}]' ;;
      stopped) echo '[{"State": {"Status": "exited", "ExitCode": 137}}]' ;;
      hung) sleep 30 ;;
      *) echo "Error response from daemon: No such container: $3" >&2; exit 1 ;;
    esac ;;
  "image inspect") [ -n "$FAKE_DOWN" ] && { echo "Cannot connect to the Docker daemon at $FAKE_DOWN" >&2; exit 1; }
                   [ -n "$FAKE_GONE" ] && gone
                   case "$5" in
      lab/runtime:1) echo sha256:abc ;;
      *) echo "Error response from daemon: No such image: $5" >&2; exit 1 ;;
    esac ;;
  exec*) shift; [ "$1" = -i ] && shift; shift; exec "$@" ;;
esac
"""


def run_command(argv):
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture()
def cli(tmp_path, monkeypatch):
    docker = tmp_path / "docker"
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    monkeypatch.setenv("CALLS", str(tmp_path / "calls"))
    return DockerCli(run_command, str(docker), "unix:///run/fake.sock", timeout=2)


@pytest.mark.parametrize(
    "case, container, expected",
    [("running", "ray-head", "running"), ("stopped", "stopped", "exited"), ("no such container", "nope", "absent")],
)
def test_inspect_and_status(cli, case, container, expected):
    assert status(cli.inspect(container)) == expected, case


def test_a_hung_dockerd_is_a_message_within_the_bound(cli):
    with pytest.raises(DockerError, match=r"`docker container inspect` did not answer within 2 s \(dockerd at unix:///run/fake.sock hung\?\)"):
        cli.inspect("hung")


def test_ping_names_what_the_cli_said(cli, monkeypatch):
    assert cli.ping() == "28.2.2"
    monkeypatch.setenv("FAKE_DOWN", "unix:///run/fake.sock")
    with pytest.raises(DockerError, match="Cannot connect to the Docker daemon at unix:///run/fake.sock"):
        cli.ping()


def test_one_probe_process_answers_every_step_of_a_check_through_docker_exec(cli, tmp_path):
    # the stand-in's exec runs the argv itself: a "python" that answers its arguments, then each line of its stdin
    python = tmp_path / "python"
    python.write_text(f"""#!/bin/sh
echo 'ray says hello'
echo '{RESULT_MARKER}{{"step": 1}}'
while read -r line; do echo '{RESULT_MARKER}{{"step": 2}}'; done
""")
    python.chmod(0o755)
    session = container_session(cli, "ray-head", str(python), 10)
    assert session.ask({"mode": "table", "limit": 5}) == {"step": 1}
    assert session.ask({"mode": "dryrun", "limit": 5}) == {"step": 2}
    session.close()
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0] == "container inspect ray-head"
    # (the program's source spans many lines of the log: count the calls by their first word)
    assert [c for c in calls if c.startswith(("exec", "container"))] == calls[:2]
    assert calls[1].startswith(f"exec -i ray-head {python} -c ")
    assert '"session": true' in (tmp_path / "calls").read_text()


def test_a_probe_that_ends_without_answering_is_named_with_its_last_lines(cli, tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named ray'\nexit 1\n")
    python.chmod(0o755)
    session = container_session(cli, "ray-head", str(python), 10)
    with pytest.raises(ProbeError, match="container ray-head exited 1 without a result: ModuleNotFoundError: No module named ray"):
        session.ask({"mode": "table", "limit": 5})


@pytest.mark.parametrize(
    "container, message",
    [("stopped", "container 'stopped' is exited, not running"), ("nope", "container 'nope' does not exist on this host")],
)
def test_the_probe_names_a_head_container_that_does_not_run(cli, container, message):
    with pytest.raises(ProbeError, match=message):
        container_session(cli, container, "python3", 10)


@pytest.mark.parametrize("image, expected", [("lab/runtime:1", "sha256:abc"), ("lab/runtime:2", "")])
def test_an_images_id_or_none_when_the_engine_lacks_it(cli, image, expected):
    assert cli.image_id(image) == expected


def test_an_image_read_from_an_engine_that_does_not_answer_is_an_error(cli, monkeypatch):
    monkeypatch.setenv("FAKE_DOWN", "unix:///var/run/docker.sock")
    with pytest.raises(DockerError, match="docker image inspect lab/runtime:1"):
        cli.image_id("lab/runtime:1")


# Docker 28's CLI where the engine's socket is gone (docker.socket failed its start limit, a wrong docker_host): its
# "no such file or directory" is no answer about the container or the image, which must not read as absent (the
# probe said "does not exist ... is the Ray head deployed?", the rank reader skipped the container).
def test_an_engine_whose_socket_is_gone_is_an_error_not_an_absent_container_or_image(cli, monkeypatch):
    monkeypatch.setenv("FAKE_GONE", "unix:///var/run/docker.sock")
    with pytest.raises(DockerError, match="failed to connect to the docker API at unix:///var/run/docker.sock"):
        cli.inspect("ray-head")
    with pytest.raises(DockerError, match="failed to connect to the docker API"):
        cli.image_id("lab/runtime:1")
    with pytest.raises(DockerError, match="connect: no such file or directory"):
        container_session(cli, "ray-head", "python3", 10)
