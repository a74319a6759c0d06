"""Preflight's judgement of port_holders' read: a port another process holds in both reads is refused, naming host,
setting and port; the cluster's own owners keep theirs; a user who may not ask Docker gets a note, not a refusal; held
ports with an engine that does not answer are F26's; worded as the role said them in its YAML before."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ports_free import report

RAY = _backends.traits("ray")
CONTAINERS = {"ray": "vllm-cluster-ray-head", "vllm": "vllm-cluster-vllm", "supervisor": "vllm-cluster-supervisor"}
VALUES = {"vllm_cluster_weights_port": 29510}


def listening(*ports):
    return "".join(f"LISTEN 0 128 0.0.0.0:{port} 0.0.0.0:*\n" for port in ports)


QUIET = {"running": [], "docker_error": "", "listening": "", "listening_after": "",
         "staging_server": {"pid": 0, "reason": ""}}
TAKEN_8000 = ("spark-1: vllm_server_port=8000 already in use by another process (`ss -ltnp` on spark-1 names it); Ray "
              "or vLLM would fail to bind it late and obscurely. Fix: stop that process, or set the variable to a "
              "free port.")
DENIED = "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock"
NOT_CHECKED = f"NOTE spark-1: ports not checked for other processes: ops may not ask Docker ({DENIED})."
STAGING = ("NOTE spark-1: vllm_cluster_weights_port=29510 is held by the collection's staging server (pid 4242): an "
           "interrupted run's, which the next staging ends, or another run's.")


@pytest.mark.parametrize(("case", "read", "taken", "notes", "engine_down", "problem"), [
    ("nothing listens", {}, [], [], False, ""),
    ("another process on vLLM's port, in both reads", {"listening": listening(8000), "listening_after": listening(8000)},
     ["vllm_server_port=8000"], [], False, TAKEN_8000),
    ("held in the first read only (a staging server of another run ended between them)",
     {"listening": listening(8000)}, [], [], False, ""),
    ("held in the second read only", {"listening_after": listening(8000)}, [], [], False, ""),
    ("vLLM's own container runs: its port is its own",
     {"running": ["vllm-cluster-vllm"], "listening": listening(8000), "listening_after": listening(8000)},
     [], [], False, ""),
    ("Ray's container runs, another process on vLLM's port",
     {"running": ["vllm-cluster-ray-head"], "listening": listening(6379, 8000), "listening_after": listening(6379, 8000)},
     ["vllm_server_port=8000"], [], False, TAKEN_8000),
    ("Ray's port held while its container does not run, lowest port first",
     {"listening": listening(8000, 6379), "listening_after": listening(8000, 6379)},
     ["vllm_cluster_ray_port=6379", "vllm_server_port=8000"], [], False,
     TAKEN_8000.replace("vllm_server_port=8000", "vllm_cluster_ray_port=6379, vllm_server_port=8000")),
    ("the collection's staging server holds the weights port",
     {"staging_server": {"pid": 4242, "reason": ""}, "listening": listening(29510), "listening_after": listening(29510)},
     [], [STAGING], False, ""),
    ("a user who may not ask Docker: a note, nothing refused",
     {"docker_error": f"Got {DENIED}", "listening": listening(8000), "listening_after": listening(8000)},
     ["vllm_server_port=8000"], [NOT_CHECKED.replace(f"({DENIED})", f"(Got {DENIED})")], False, ""),
    ("held ports and an engine that does not answer: F26's",
     {"docker_error": "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
      "listening": listening(6379), "listening_after": listening(6379)},
     ["vllm_cluster_ray_port=6379"], [], True,
     TAKEN_8000.replace("vllm_server_port=8000", "vllm_cluster_ray_port=6379")),
    ("an engine that does not answer and no port held: nothing here (docker_runtime may start it)",
     {"docker_error": "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."}, [], [], False, ""),
    ("a user who may not ask Docker and an engine that does not answer: F26 stops it, nothing else refused",
     {"docker_error": f"Got {DENIED}\nCannot connect to the Docker daemon at unix:///var/run/docker.sock.",
      "listening": listening(8000), "listening_after": listening(8000)},
     ["vllm_server_port=8000"], [NOT_CHECKED.replace(f"({DENIED})", f"(Got {DENIED})")], True, ""),
])
def test_report(case, read, taken, notes, engine_down, problem):
    found = report(dict(QUIET, **read), VALUES, RAY, True, True, CONTAINERS, "spark-1", "ops")
    assert found == {"taken": taken, "notes": notes, "engine_down": engine_down, "problem": problem}, case


def test_a_worker_checks_only_the_ports_every_node_opens():
    # vLLM's API and Ray's GCS are the head's: a worker with something on 8000 and 6379 is not refused for them
    read = dict(QUIET, listening=listening(8000, 6379, 6380), listening_after=listening(8000, 6379, 6380))
    found = report(read, VALUES, RAY, False, True, CONTAINERS, "spark-2")
    assert found["taken"] == ["vllm_cluster_ray_node_manager_port=6380"]
    assert found["problem"].startswith("spark-2: vllm_cluster_ray_node_manager_port=6380 already in use")


def test_the_user_defaults_to_this_user_and_a_missing_read_is_nothing_held():
    found = report({"docker_error": DENIED}, {}, RAY, True, False, CONTAINERS, "spark-1")
    assert found["notes"] == [f"NOTE spark-1: ports not checked for other processes: this user may not ask Docker ({DENIED})."]
    assert found["taken"] == [] and found["problem"] == ""


def test_a_head_that_does_not_stage_the_weights_leaves_their_port_alone():
    read = dict(QUIET, listening=listening(29510), listening_after=listening(29510))
    assert report(read, VALUES, RAY, True, True, CONTAINERS, "spark-1")["taken"] == ["vllm_cluster_weights_port=29510"]
    assert report(read, VALUES, RAY, True, False, CONTAINERS, "spark-1")["taken"] == []


def test_the_staging_server_leaves_another_process_on_another_port_refused():
    read = dict(QUIET, staging_server={"pid": 4242, "reason": ""}, listening=listening(29510, 8000),
                listening_after=listening(29510, 8000))
    found = report(read, VALUES, RAY, True, True, CONTAINERS, "spark-1")
    assert found["taken"] == ["vllm_server_port=8000"] and found["notes"] == [STAGING] and found["problem"] == TAKEN_8000


def test_ansible_finds_the_filter():
    from ansible.plugins.loader import filter_loader

    assert filter_loader.get("inferops.vllm_cluster.ports_free_report") is not None
