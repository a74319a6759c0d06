"""The link gate (F25) on the lab: Gloo over the interconnect in the serving image, for real. A healthy link passes
and a run that changes nothing does not measure it again; a throttled port fails the run before any Ray or vLLM
container changes; an MTU lowered on one side warns or fails as F12's setting says."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_gate
from conftest import TEST_PROGRAM_PORT, flat, task_outcome

MIB = 1 << 20
LARGEST = 4 * MIB  # the lab's link_gate_max_bytes (inventories/lab/group_vars/all/cluster.yml)
MEASURE = "Measure the interconnect and judge it (F25)"
PROGRAM_PORT = TEST_PROGRAM_PORT  # the program's own runs below, on spark-1's loopback: no rank of the cluster's gate there


def ranks_on_one_node(lab, world: int, started: list[int], **settings) -> dict[int, dict]:
    """The gate's program as `world` ranks on spark-1's loopback, in the lab's runtime image, only `started` of them
    run: what each rank answered."""
    image = re.search(r"^vllm_cluster_image: (\S+)", (pathlib.Path(__file__).resolve().parents[2] / "inventories" / "lab"
                                                      / "group_vars" / "all" / "images.yml").read_text(), re.M).group(1)
    hosts = [f"rank-{rank}" for rank in range(world)]
    base = {"hosts": hosts, "address": "127.0.0.1", "port": PROGRAM_PORT, "backend": "gloo", "max_bytes": 4 * MIB,
            "iterations": 2, "budget": 30, "connect_timeout": 60}
    running = {}
    for rank in started:
        ran = _link_gate.container(rank, dict(base, **settings))
        running[rank] = subprocess.Popen(
            ["docker", "exec", "inferops-lab-spark-1", "docker", "run", "--rm", "--network", "host",
             "-e", "GLOO_SOCKET_IFNAME=lo", "--label", "inferops.vllm_cluster.component=link-gate-test",
             "--entrypoint", ran["entrypoint"][0], image, *ran["command"]],
            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return {rank: _link_gate.parse(process.communicate(timeout=300)[0]) for rank, process in running.items()}


def record_of(output: str) -> dict:
    """The record the run read or wrote, at the path it names."""
    match = re.search(r"Record: (/\S+?\.json)", flat(output))
    assert match, output[-3000:]
    return json.loads(pathlib.Path(match.group(1)).read_text())


def largest(record: dict) -> dict:
    return {row["op"]: row for row in record["rows"] if row["bytes"] == LARGEST}


# Read-only: nothing on the nodes changes (the gate's containers are run and removed), and the record it writes is
# the one every other run of the lab would read.
@pytest.mark.readonly
def test_a_healthy_link_passes_and_a_run_that_changes_nothing_measures_it_no_more(lab, tmp_path):
    # the lab's converge measured it (the suite's, or make lab's): a run now reads that record, unless something the
    # figures depend on changed since, and then it measures; either way, the run after it reads the record
    before = lab.containers()
    runs = []
    for attempt in range(2):
        result = lab.playbook(tmp_path, "--tags", "link", "--skip-tags", "preflight")
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        runs.append(output)
        if "link gate: not measuring: the gate passed on " in flat(output):
            break
        assert attempt == 0 and "link gate: measuring:" in flat(output), output[-3000:]
    assert task_outcome(runs[-1], MEASURE, "spark-1") == "skipping"
    record = record_of(runs[-1])
    assert f"the gate passed on {record['date']} with this image" in flat(runs[-1])
    assert record["passed"] and record["problems"] == [] and record["backend"] == "gloo"
    figures = largest(record)
    assert set(figures) == {"all_reduce", "all_gather"}
    assert record["threshold_gbps"] > 0
    assert all(row["busbw"] >= record["threshold_gbps"] for row in figures.values()), figures
    # each rank on its own node's interconnect interface (the env file's pinning), not the management one
    assert record["ranks"]["spark-1"]["link"] == {"transport": "Socket", "devices": ["eth1"]}
    assert record["ranks"]["spark-2"]["link"] == {"transport": "Socket", "devices": ["ic0"]}
    nodes = record["measured_with"]["nodes"]
    assert nodes["spark-1"]["machine_id"] and nodes["spark-1"]["machine_id"] != nodes["spark-2"]["machine_id"]
    assert nodes["spark-2"]["address"] == "198.18.1.13"
    assert any(line.split()[:3] == ["all_gather", "4", "MiB"] for line in record["table"]), record["table"]
    # a measurement: the gate's containers are gone, nothing else changed
    assert lab.containers() == before
    assert lab.gate_leftovers() == {"spark-1": [], "spark-2": []}


@pytest.mark.readonly
def test_off_and_a_run_limited_to_one_node_measure_nothing_and_say_why(lab, tmp_path):
    before = lab.containers()
    for args, reason in (
            (["-e", "vllm_cluster_link_gate=off"], "link gate: not measuring: vllm_cluster_link_gate=off: the "
                                                   "interconnect is not measured before vLLM loads."),
            (["--limit", "spark-1", "-e", "vllm_cluster_link_gate=always"],
             "link gate: not measuring: spark-2 take(s) no part in this run (--limit or unreachable) and every node "
             "holds a rank: not measured.")):
        result = lab.playbook(tmp_path, "--tags", "link", "--skip-tags", "preflight", *args)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        assert reason in flat(output), output[-3000:]
        assert task_outcome(output, MEASURE, "spark-1") == "skipping"
    assert lab.containers() == before


def test_a_throttled_port_fails_the_run_before_ray_or_vllm_change(lab, tmp_path):
    # spark-2's interconnect port at 100 Mbit/s: the lab's link measures 0.2-0.9 GB/s, this 0.012
    lab.node("spark-2", "tc", "qdisc", "add", "dev", "ic0", "root", "tbf", "rate", "100mbit", "burst", "64kb",
             "latency", "50ms")
    try:
        before = lab.containers()
        # had the gate passed, this run would restart Ray and vLLM on both nodes
        output = lab.expect_failure(
            tmp_path, ["[F25] spark-1 <-> spark-2: bus bandwidth", "below vllm_cluster_min_bus_bandwidth=0.05 GB/s",
                       "(transport Socket)", "Nothing of Ray or vLLM was changed."],
            "--tags", "link,ray,vllm", "-e", "vllm_cluster_restart=true", "-e", "vllm_cluster_link_gate=always")
        assert lab.containers() == before and lab.gate_leftovers() == {"spark-1": [], "spark-2": []}
        record = record_of(output)
        assert not record["passed"]
        slow = [row["busbw"] for row in largest(record).values()]
        assert slow and all(value < record["threshold_gbps"] for value in slow), record["rows"]
        assert f"{slow[0]} GB/s in all_reduce at 4 MiB" in flat(output)
    finally:
        lab.node("spark-2", "tc", "qdisc", "del", "dev", "ic0", "root")
    # (the next run measures again, the record having failed: the MTU test below starts with that run)


def test_an_mtu_lowered_on_one_side_warns_and_measures_or_fails_as_f12_says(lab, tmp_path):
    mtu = lab.node("spark-2", "cat", "/sys/class/net/ic0/mtu").stdout.strip()
    lab.node("spark-2", "ip", "link", "set", "dev", "ic0", "mtu", "1400")
    try:
        warned = lab.playbook(tmp_path, "--tags", "link")
        output = warned.stdout + warned.stderr
        assert warned.returncode == 0, output[-3000:]
        assert f"WARNING [F12] interconnect MTU differs between nodes: spark-1 eth1 {mtu}, spark-2 ic0 1400" \
            in flat(output)
        # a changed interconnect is measured again (the reason names the change, unless this controller has no
        # record of the lab yet or its last gate failed: then it measures for that)
        reason = re.search(r"link gate: measuring: (.*?)\. Record: ", flat(output))
        assert reason, output[-3000:]
        assert (f"spark-2: mtu {mtu} -> 1400" in reason.group(1)
                or reason.group(1).startswith(("no gate has measured", "the last gate ("))), reason.group(1)
        assert record_of(output)["measured_with"]["nodes"]["spark-2"]["mtu"] == "1400"

        refused = lab.expect_failure(tmp_path, ["[F12] interconnect MTU differs between nodes"],
                                     "--tags", "link", "-e", "vllm_cluster_mtu_mismatch=fail")
        assert "link gate:" not in refused  # stopped by preflight, before anything was measured
    finally:
        lab.node("spark-2", "ip", "link", "set", "dev", "ic0", "mtu", mtu)
    # back as it was: measured again (what the next run would do anyway), the record at the MTU the lab has
    restored = lab.playbook(tmp_path, "--tags", "link")
    output = restored.stdout + restored.stderr
    assert restored.returncode == 0, output[-3000:]
    assert f"spark-2: mtu 1400 -> {mtu}" in flat(output)
    assert record_of(output)["measured_with"]["nodes"]["spark-2"]["mtu"] == mtu


@pytest.mark.readonly
def test_with_more_than_two_nodes_each_pairs_with_the_head_at_the_size_the_sweep_reached(lab):
    answers = ranks_on_one_node(lab, 3, [0, 1, 2])
    assert all(answer and answer["ok"] for answer in answers.values()), answers
    # every rank holds the same figures (the slowest rank's time)
    assert answers[0]["rows"] == answers[1]["rows"] == answers[2]["rows"]
    assert [pair["ranks"] for pair in answers[0]["pairs"]] == [[0, 1], [0, 2]]
    assert {pair["row"]["bytes"] for pair in answers[0]["pairs"]} == {4 * MIB}
    assert all(pair["row"]["ranks"] == 2 and pair["row"]["busbw"] > 0 for pair in answers[0]["pairs"])


@pytest.mark.readonly
def test_a_rank_that_never_comes_is_an_answer_not_a_hang(lab):
    answers = ranks_on_one_node(lab, 3, [0, 1], connect_timeout=5)
    judged = _link_gate.verdict({f"rank-{rank}": answer for rank, answer in answers.items()},
                                {"hosts": ["rank-0", "rank-1", "rank-2"], "address": "127.0.0.1",
                                 "port": PROGRAM_PORT, "connect_timeout": 5, "backend": "gloo",
                                 "min_bus_bandwidth": 0.05})
    assert not judged["passed"]
    # the head's store names the missing client; the rank that never ran gave nothing
    assert "waiting for clients" in answers[0]["error"], answers[0]
    assert judged["problems"][0].startswith("[F25] rank-0: the link gate's rank gave no result")
    assert "could not meet the others at 127.0.0.1:29590 within 5 s" in judged["problems"][0]
    assert any(problem.startswith("[F25] rank-2:") for problem in judged["problems"])
