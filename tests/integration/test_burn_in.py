"""The burn-in (F27): sustained load passes on the healthy lab and keeps its figures; a rank stopped half way is a
stall, dated, while /health still answers."""

from __future__ import annotations

import calendar
import json
import pathlib
import re
import time

import pytest

from conftest import api_key, flat
from test_serving_across_nodes import complete, health, ranks

BURN_IN = "playbooks/burn_in.yml"


def record_of(output: str) -> tuple[pathlib.Path, dict]:
    match = re.search(r"Write the record \(owner only\) to (/\S+?burn-in\.json)", flat(output))
    assert match, output[-3000:]
    path = pathlib.Path(match.group(1))
    return path, json.loads(path.read_text())


def test_a_burn_in_passes_on_the_healthy_lab_and_keeps_its_figures(lab, tmp_path, unchanged):
    # 30 s: three 10 s windows, the fewest the throughput is judged from (the lab's 15 s windows took 45 s of the suite)
    result = lab.playbook(tmp_path, "-e", "burn_in_minutes=0.5", "-e", "burn_in_window=10", playbook=BURN_IN)
    output = flat(result.stdout + result.stderr)
    assert result.returncode == 0, output[-3000:]
    ran = re.search(r"burn-in of tiny-llama at http://198\.18\.0\.180:8000: ([\d.]+) s of 2 concurrent requests, 16 "
                    r"tokens each", output)
    assert ran and 30 <= float(ran.group(1)) < 60, output[-3000:]
    counts = re.search(r"requests (\d+) \(0 failed\), tokens (\d+), ([\d.]+) tokens/s", output)
    assert counts, output[-3000:]
    requests, tokens = int(counts.group(1)), int(counts.group(2))
    assert requests > 0 and tokens == 16 * requests  # exactly max_tokens each: ignore_eos
    windows = re.search(r"tokens/s per 10 s window: ([\d. ]+), last window [+-]\d+% against the first windows", output)
    assert windows and len(windows.group(1).split()) == 3 and all(float(rate) > 0 for rate in windows.group(1).split())
    assert re.search(r"latency p50 [\d.]+ s, p90 [\d.]+ s, p99 [\d.]+ s, max [\d.]+ s", output)
    assert re.search(r"- passed\b", output), output[-3000:]
    path, record = record_of(result.stdout)
    assert path.stat().st_mode & 0o777 == 0o600
    assert record["verdict"]["passed"] and record["summary"]["requests"] == requests
    assert record["settings"]["concurrency"] == 2 and record["model"] == "tiny-llama"
    assert api_key() not in result.stdout + result.stderr and api_key() not in path.read_text()

    # diagnose shows it, from the same record
    report = tmp_path / "diagnose.md"
    shown = lab.playbook(tmp_path, "--check", "-e", f"diagnose_report={report}", playbook="playbooks/diagnose.yml")
    assert shown.returncode == 0, (shown.stdout + shown.stderr)[-3000:]
    assert f"burn-in: passed on {record['began']}" in flat(shown.stdout)
    text = report.read_text()
    assert f"PASSED, began {record['began']} UTC (`{path}`)" in text and record["table"][1] in text


@pytest.mark.restarts_layers
def test_a_rank_stopped_half_way_is_a_stall_named_with_its_time_while_health_answers(lab):
    [rank] = [r for r in ranks(lab) if r["address"] == "198.18.1.13"]
    run = lab.start_playbook("-e", "burn_in_minutes=1", "-e", "burn_in_request_timeout=15", playbook=BURN_IN)
    stop = ["docker", "exec", "vllm-cluster-ray-worker", "kill"]
    lines = []
    try:
        # the load starts with the job's task: a few seconds of answers before the rank stops
        for line in run.stdout:
            lines.append(line)
            if "Wait for the burn-in to end" in line:
                break
        time.sleep(8)
        lab.node("spark-2", *stop, "-STOP", str(rank["pid"]))
        stopped = time.time()
        time.sleep(3)
        during = health()
        output = flat("".join(lines) + run.communicate(timeout=300)[0])
    finally:
        lab.node("spark-2", *stop, "-CONT", str(rank["pid"]), check=False)
        if run.poll() is None:
            run.kill()
    assert run.returncode != 0, output[-3000:]
    assert during == "200", f"/health said {during} with spark-2's rank stopped"
    found = re.search(r"\[F27\] spark-1: a burn-in request sent \d+ s in \((\d\d:\d\d:\d\d) UTC\) had no answer within "
                      r"15 s \((\d) in flight when it timed out\): the engine stopped generating", output)
    assert found, output[-3000:]
    # the stalled request went out about when the rank stopped (one request's length before it at most)
    day = time.strftime("%Y-%m-%d", time.gmtime(stopped))
    sent = calendar.timegm(time.strptime(f"{day} {found.group(1)}", "%Y-%m-%d %H:%M:%S"))
    assert -10 < sent - stopped < 5, (found.group(1), time.strftime("%H:%M:%S", time.gmtime(stopped)))
    assert re.search(r"requests \d+ \(\d+ failed\)", output)
    # resumed, the rank computes again: the cluster answers without a restart
    deadline = time.monotonic() + 120
    while True:
        try:
            assert complete() > 0
            break
        except OSError:
            assert time.monotonic() < deadline, "the cluster did not answer within 120 s of the rank's SIGCONT"
            time.sleep(2)
