"""The probe program itself, run by a real Python against a stand-in `ray` that serves a recorded node table:
it stops waiting at once for what never heals, and its deadline ends it whatever blocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_probe import RESULT_MARKER, ProbeError, ProbeSession, run_locally

FAKE_RAY = '''
import atexit, json, os, time
def shutdown():
    # as Ray's own exit handler: it disconnects and joins Ray's threads (0.9 s in the lab's Ray head)
    with open(os.environ["FAKE_RAY_CALLS"], "a") as calls:
        calls.write("s")
def init(**kwargs):
    atexit.register(shutdown)
    with open(os.environ["FAKE_RAY_CALLS"], "a") as calls:
        calls.write("i")
    if os.environ.get("FAKE_RAY_HANG"):
        time.sleep(3600)
def nodes():
    with open(os.environ["FAKE_RAY_CALLS"], "a") as calls:
        calls.write("x")
    return json.loads(os.environ["FAKE_RAY_NODES"])
'''


def node(address, hostname, head=False):
    return {"NodeID": address + hostname, "Alive": True, "NodeManagerAddress": address, "NodeManagerHostname": hostname,
            "Resources": {"GPU": 1.0, **({"node:__internal_head__": 1.0} if head else {})}}


@pytest.fixture()
def fake_ray(tmp_path):
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text(FAKE_RAY)
    calls = tmp_path / "calls"
    calls.write_text("")

    def probe(nodes, hang=False, **params):
        env = dict(os.environ, PYTHONPATH=str(tmp_path), FAKE_RAY_CALLS=str(calls), FAKE_RAY_NODES=json.dumps(nodes))
        if hang:
            env["FAKE_RAY_HANG"] = "1"

        def run_command(argv):
            done = subprocess.run(argv, env=env, text=True, capture_output=True, timeout=60, check=False)
            return done.returncode, done.stdout, done.stderr

        result = run_locally(run_command, sys.executable, dict({"mode": "table", "cidr": "198.18.1.0/24"}, **params))
        return result, calls.read_text().count("x")

    return probe


WAIT_FOR_BOTH = {"timeout": 3, "wait_for_ips": ["198.18.1.12", "198.18.1.13"]}


@pytest.mark.parametrize(
    "case, nodes, stops_at_once",
    [
        ("the head on its management address (F1): the worker can never join", [node("198.18.0.180", "spark-1", head=True)], True),
        ("a worker outside the interconnect (F4)", [node("198.18.1.12", "spark-1", True), node("198.18.0.181", "spark-2")], True),
        ("one address, two machines (F8)", [node("198.18.1.12", "spark-1", True), node("198.18.1.12", "spark-9")], True),
        ("a restarted node's stale raylet: it goes away", [node("198.18.1.12", "spark-1", True), node("198.18.1.12", "spark-1")], False),
        ("a worker still joining", [node("198.18.1.12", "spark-1", True)], False),
    ],
)
def test_the_wait_for_nodes_ends_at_once_only_for_what_never_heals(fake_ray, case, nodes, stops_at_once):
    result, calls = fake_ray(nodes, **WAIT_FOR_BOTH)
    assert result["nodes"] == nodes, case
    assert (calls == 1) is stops_at_once, (case, calls)


def test_a_complete_table_ends_the_wait(fake_ray):
    result, calls = fake_ray([node("198.18.1.12", "spark-1", True), node("198.18.1.13", "spark-2")], **WAIT_FOR_BOTH)
    assert calls == 1 and len(result["nodes"]) == 2


def test_the_deadline_ends_a_probe_that_ray_blocks(fake_ray):
    with pytest.raises(ProbeError, match=r"did not finish within its deadline of 2 s: Ray's GCS accepted the connection"):
        fake_ray([], hang=True, timeout=1, limit=2)


def test_a_session_imports_ray_and_joins_the_cluster_once_for_every_step(tmp_path):
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text(FAKE_RAY)
    calls = tmp_path / "calls"
    calls.write_text("")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), FAKE_RAY_CALLS=str(calls),
               FAKE_RAY_NODES=json.dumps([node("198.18.1.12", "spark-1", True), node("198.18.1.13", "spark-2")]))

    def popen(argv):
        return subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    session = ProbeSession(popen, sys.executable, "a local session")
    first = session.ask({"mode": "table", "cidr": "198.18.1.0/24", "timeout": 3, "limit": 30, **WAIT_FOR_BOTH})
    again = session.ask({"mode": "table", "cidr": "198.18.1.0/24", "timeout": 0, "limit": 30})
    assert len(first["nodes"]) == 2 and len(again["nodes"]) == 2
    assert calls.read_text().count("i") == 1
    # the stand-in has no ray.util: the dry-run's step fails inside the probe, which ends; its words are the error
    with pytest.raises(ProbeError, match=r"a local session exited 1 without a result: .*AttributeError"):
        session.ask({"mode": "dryrun", "timeout": 1, "limit": 30})
    session.close()


def test_a_session_waiting_for_its_next_request_is_not_ended_by_the_last_ones_deadline(tmp_path):
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text(FAKE_RAY)
    (tmp_path / "calls").write_text("")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), FAKE_RAY_CALLS=str(tmp_path / "calls"),
               FAKE_RAY_NODES=json.dumps([node("198.18.1.12", "spark-1", True)]))

    def popen(argv):
        return subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    session = ProbeSession(popen, sys.executable, "a local session")
    assert session.ask({"mode": "table", "timeout": 0, "limit": 1})["nodes"]
    # the module reads Docker between two steps: longer than the first step's own deadline of 1 s
    time.sleep(1.5)
    assert session.ask({"mode": "table", "timeout": 0, "limit": 5})["nodes"]
    session.close()


def test_a_garbled_result_line_is_a_probe_error_not_a_crash(tmp_path):
    program = tmp_path / "python"
    program.write_text(f"#!/bin/sh\necho '{RESULT_MARKER}{{\"nodes\": [tr'\ncat >/dev/null\n")
    program.chmod(0o755)

    def popen(argv):
        return subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    session = ProbeSession(popen, str(program), "a local session")
    with pytest.raises(ProbeError, match="answered a garbled result"):
        session.ask({"mode": "table", "limit": 5})


@pytest.mark.parametrize("how", ["a session whose stdin ends", "a single request"])
def test_the_probe_leaves_after_its_last_answer_without_rays_shutdown(tmp_path, how):
    # the module waits for the probe's process to end: Ray's exit handler would add its shutdown to every check
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text(FAKE_RAY)
    calls = tmp_path / "calls"
    calls.write_text("")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), FAKE_RAY_CALLS=str(calls),
               FAKE_RAY_NODES=json.dumps([node("198.18.1.12", "spark-1", True)]))
    params = {"mode": "table", "cidr": "198.18.1.0/24", "timeout": 0, "limit": 30}
    if how == "a single request":
        def run_command(argv):
            done = subprocess.run(argv, env=env, text=True, capture_output=True, timeout=60, check=False)
            return done.returncode, done.stdout, done.stderr
        assert run_locally(run_command, sys.executable, params)["nodes"]
    else:
        process = []

        def popen(argv):
            process.append(subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, text=True))
            return process[0]

        session = ProbeSession(popen, sys.executable, "a local session")
        assert session.ask(params)["nodes"]
        session.close()
        assert process[0].returncode == 0
    assert calls.read_text() == "ix"
