"""The module end to end, both ways it runs (through AnsibleModule, and as the program its action pipes to the node's
Python: plugin_utils/_direct_action.py), against a stand-in `docker` (a shell script on PATH) that logs every call: a
serving node is read with one exec a container and no inspect; a container that is absent or stopped is skipped
(inspected only once its exec failed); one that runs and cannot be read fails the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rank_env import ARGUMENT_SPEC
from ansible_collections.inferops.vllm_cluster.plugins.modules import rank_env_check
from ansible_collections.inferops.vllm_cluster.plugins.plugin_utils._direct_action import program, validated

# The container names tell the stand-in what to answer; a container that runs holds one rank process, pinned as
# expected, and no non-carry-over list.
FAKE_DOCKER = r"""#!/bin/sh
shift 2  # --host <address>
echo "$1 $2 $3" >> "$CALLS"
[ -n "$FAKE_GONE" ] && { echo "failed to connect to the docker API at unix:///var/run/docker.sock; check if the path is" \
                        "correct and if the daemon is running: dial unix /var/run/docker.sock: connect: no such file or" \
                        "directory" >&2; exit 1; }
case "$1 $2" in
  "container inspect") case "$3" in
      ray-worker|vllm|unreadable) echo '[{"State": {"Status": "running"}}]' ;;
      stopped) echo '[{"State": {"Status": "exited", "ExitCode": 137}}]' ;;
      *) echo "Error response from daemon: No such container: $3" >&2; exit 1 ;;
    esac ;;
  exec*) case "$2" in
      ray-worker|vllm) case "$3" in
          python3) echo '{"7": {"cmdline": "ray::RayWorkerWrapper.execute_method", "env": {"NCCL_SOCKET_IFNAME": "ic0"}, "secrets": []}}' ;;
          *) echo "cat: $4: No such file or directory" >&2; exit 1 ;;
        esac ;;
      unreadable) echo "OCI runtime exec failed: permission denied" >&2; exit 126 ;;
      stopped) echo "Error response from daemon: container $2 is not running" >&2; exit 1 ;;
      *) echo "Error response from daemon: No such container: $2" >&2; exit 1 ;;
    esac ;;
esac
"""


@pytest.fixture()
def docker_calls(tmp_path, monkeypatch):
    docker = tmp_path / "bin" / "docker"
    docker.parent.mkdir()
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    calls = tmp_path / "calls"
    calls.write_text("")
    monkeypatch.setenv("PATH", f"{docker.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(calls))
    return lambda: [line.split()[:3] for line in calls.read_text().splitlines()]


@pytest.fixture(params=["module", "direct"])
def run(request, capsys):
    def result(**args):
        args = dict({"expected": {"NCCL_SOCKET_IFNAME": "ic0"}, "host": "spark-2"}, **args)
        if request.param == "direct":
            text = program("_rank_env", validated("rank_env_check", ARGUMENT_SPEC, args))
            done = subprocess.run([sys.executable, "-"], input=text, capture_output=True, text=True, check=True)
            return json.loads(done.stdout)
        with patch_module_args(args), pytest.raises(SystemExit):
            rank_env_check.main()
        return json.loads(capsys.readouterr().out)
    return result


@pytest.mark.parametrize(
    ("args", "calls"),
    [
        # a worker: its Ray container read once
        ({"container": "ray-worker"}, [["exec", "ray-worker", "python3"]]),
        # the head: its Ray container, the driver, the driver's non-carry-over list
        ({"container": "ray-worker", "driver_container": "vllm", "non_carry_over_file": "/nonexistent/list.json"},
         [["exec", "ray-worker", "python3"], ["exec", "vllm", "python3"], ["exec", "vllm", "cat"]]),
        # absent or stopped: asked, then inspected to tell that from a failure, then skipped
        ({"container": "absent"}, [["exec", "absent", "python3"], ["container", "inspect", "absent"]]),
        ({"container": "stopped"}, [["exec", "stopped", "python3"], ["container", "inspect", "stopped"]]),
    ],
    ids=["worker", "head", "absent", "stopped"],
)
def test_each_container_is_asked_once_and_inspected_only_when_that_fails(docker_calls, run, args, calls):
    result = run(**args)
    assert not result.get("failed"), result
    assert result["carried"] == []
    assert list(result["ranks"]) == (["7"] if args["container"] == "ray-worker" else [])
    assert docker_calls() == calls


def test_a_running_container_that_cannot_be_read_fails_naming_host_and_container(docker_calls, run):
    result = run(container="unreadable")
    assert result["failed"] is True
    assert result["msg"].startswith("spark-2: could not read what vLLM's ranks run with: ")
    assert "unreadable" in result["msg"] and "permission denied" in result["msg"]
    assert docker_calls() == [["exec", "unreadable", "python3"], ["container", "inspect", "unreadable"]]


def test_an_engine_that_does_not_answer_fails_the_check_instead_of_passing_it(docker_calls, run, monkeypatch):
    """Docker 28's words for a socket that is gone end in "no such file or directory": no container to skip."""
    monkeypatch.setenv("FAKE_GONE", "1")
    result = run(container="ray-worker")
    assert result["failed"] is True and "failed to connect to the docker API" in result["msg"], result
