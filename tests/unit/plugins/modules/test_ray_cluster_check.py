"""The module end to end through AnsibleModule, with the probe's transport replaced by recorded answers."""

from __future__ import annotations

import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.inferops.vllm_cluster.plugins.modules import ray_cluster_check

NODES_OK = [
    {"NodeID": "a" * 56, "Alive": True, "NodeManagerAddress": "198.18.1.12", "NodeManagerHostname": "spark-1",
     "Resources": {"GPU": 1.0, "node:198.18.1.12": 1.0, "node:__internal_head__": 1.0}},
    {"NodeID": "b" * 56, "Alive": True, "NodeManagerAddress": "198.18.1.13", "NodeManagerHostname": "spark-2",
     "Resources": {"GPU": 1.0, "node:198.18.1.13": 1.0}},
]
DRY_OK = {"driver_ip": "198.18.1.12", "placement": {"status": "ok", "bundles": 2, "driver_ip": "198.18.1.12", "detail": "placed"},
          "rendezvous": [{"node_id": "b" * 56, "address": "198.18.1.13", "status": "ok"}]}
ARGS = {"interconnect_cidr": "198.18.1.0/24", "expected_node_ips": {"spark-1": "198.18.1.12", "spark-2": "198.18.1.13"},
        "tensor_parallel_size": 2, "timeout": 5}


def run(monkeypatch, capsys, args, answers):
    calls = []

    def fake_probe(run_command, python, params):
        calls.append(params)
        return answers[params["mode"]]

    monkeypatch.setattr(ray_cluster_check, "run_locally", fake_probe)
    with patch_module_args(args), pytest.raises(SystemExit):
        ray_cluster_check.main()
    return json.loads(capsys.readouterr().out), calls


def test_healthy_cluster_passes_and_runs_both_dry_runs(monkeypatch, capsys):
    result, calls = run(monkeypatch, capsys, ARGS, {"table": {"nodes": NODES_OK, "waited": 0.2}, "dryrun": DRY_OK})
    assert not result.get("failed")
    assert result["changed"] is False
    assert result["violations"] == []
    assert [c["mode"] for c in calls] == ["table", "dryrun"]
    assert calls[0]["wait_for_ips"] == ["198.18.1.12", "198.18.1.13"] and calls[1]["bundles"] == 2
    assert [n["host"] for n in result["nodes"]] == ["spark-1", "spark-2"]


def test_incident_fails_naming_the_head_and_skips_the_dry_runs(monkeypatch, capsys):
    incident = [dict(NODES_OK[0], NodeManagerAddress="198.18.0.180",
                     Resources={"GPU": 1.0, "node:198.18.0.180": 1.0, "node:__internal_head__": 1.0}), NODES_OK[1]]
    result, calls = run(monkeypatch, capsys, ARGS, {"table": {"nodes": incident, "waited": 0.1}})
    assert result["failed"] is True
    assert [c["mode"] for c in calls] == ["table"]
    assert result["violations"][0]["check"] == "F1"
    for needle in ("spark-1", "198.18.0.180", "198.18.1.0/24", "--node-ip-address=198.18.1.12"):
        assert needle in result["msg"]


def test_failed_rendezvous_fails_the_module(monkeypatch, capsys):
    dry = dict(DRY_OK, rendezvous=[{"node_id": "b" * 56, "address": "198.18.1.13", "driver_ip": "198.18.1.12", "port": 4000,
                                   "status": "connect_failed", "detail": "timed out"}])
    result, calls = run(monkeypatch, capsys, ARGS, {"table": {"nodes": NODES_OK, "waited": 0.1}, "dryrun": dry})
    assert result["failed"] is True
    assert [v["check"] for v in result["violations"]] == ["F3"]
    assert [c["mode"] for c in calls] == ["table", "dryrun"]


def test_invalid_cidr_is_refused_before_asking_ray(monkeypatch, capsys):
    result, calls = run(monkeypatch, capsys, dict(ARGS, interconnect_cidr="198.18.1.0/99"), {})
    assert result["failed"] is True and "not a valid CIDR" in result["msg"]
    assert calls == []


def test_dockerd_down_is_a_message_not_a_traceback(monkeypatch, capsys, tmp_path):
    """The real docker CLI against a socket nobody serves."""
    args = dict(ARGS, container="vllm-cluster-ray-head", docker_host=f"unix://{tmp_path / 'no-dockerd.sock'}")
    with patch_module_args(args), pytest.raises(SystemExit):
        ray_cluster_check.main()
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True
    assert result["msg"].startswith(f"Could not reach the Docker daemon at unix://{tmp_path / 'no-dockerd.sock'}: ")
    assert "Traceback" not in json.dumps(result)


def test_an_unknown_node_warns_when_asked_to_and_is_not_counted(monkeypatch, capsys):
    stranger = {"NodeID": "c" * 56, "Alive": True, "NodeManagerAddress": "198.18.1.14", "NodeManagerHostname": "spark-old",
                "Resources": {"GPU": 1.0, "node:198.18.1.14": 1.0}}
    table = {"table": {"nodes": NODES_OK + [stranger], "waited": 0.1}, "dryrun": DRY_OK}
    failed, calls = run(monkeypatch, capsys, ARGS, table)
    assert failed["failed"] is True and [v["check"] for v in failed["violations"]] == ["F22"]
    assert [c["mode"] for c in calls] == ["table"]  # no dry-run on an unsound table
    warned, calls = run(monkeypatch, capsys, dict(ARGS, unknown_nodes="warn"), table)
    assert [c["mode"] for c in calls] == ["table", "dryrun"]
    assert not warned.get("failed")
    assert [u["address"] for u in warned["unknown_nodes"]] == ["198.18.1.14"]
    assert warned["unknown_nodes"][0]["message"].startswith("[F22] 198.18.1.14:")


def run_against_docker(monkeypatch, capsys, tmp_path, script):
    """The module against the head's container through a stand-in `docker` (a shell script whose arguments after
    `--host <address>` are logged, one call a line, to tmp_path/calls)."""
    docker = tmp_path / "docker"
    docker.write_text('#!/bin/sh\nshift 2\necho "$1 $2 $3" >> "$CALLS"\n' + script)
    docker.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(tmp_path / "calls"))
    with patch_module_args(dict(ARGS, container="ray-head")), pytest.raises(SystemExit):
        ray_cluster_check.main()
    return json.loads(capsys.readouterr().out), (tmp_path / "calls").read_text().splitlines()


def test_the_heads_state_is_the_first_docker_call_no_version_call_before_it(monkeypatch, capsys, tmp_path):
    """Each docker CLI call costs 0.05-0.1 s inside a node: the engine's answer is the head's inspect itself."""
    result, calls = run_against_docker(monkeypatch, capsys, tmp_path,
                                       'echo \'[{"State": {"Status": "exited", "ExitCode": 137}}]\'\n')
    assert result["failed"] is True and "'ray-head' is exited, not running" in result["msg"]
    assert calls == ["container inspect ray-head"]


def test_an_engine_whose_socket_is_gone_is_named_as_such_not_as_a_missing_head(monkeypatch, capsys, tmp_path):
    """Docker 28's CLI says "... connect: no such file or directory" where the socket is gone: not a missing head."""
    result, calls = run_against_docker(monkeypatch, capsys, tmp_path,
                                       'echo "failed to connect to the docker API at unix:///var/run/docker.sock; check if '
                                       'the path is correct and if the daemon is running: dial unix /var/run/docker.sock: '
                                       'connect: no such file or directory" >&2\nexit 1\n')
    assert result["msg"].startswith("Could not reach the Docker daemon at unix:///var/run/docker.sock: "), result["msg"]
    assert "does not exist" not in result["msg"] and calls == ["container inspect ray-head"]
