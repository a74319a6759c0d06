"""The supervisor (issue #35, F28) on the lab's real containers: a rank stopped while /health answers is found and
every rank restarted; a node restarted twice in a row serves again without an Ansible run; a rank that keeps dying
is left down at the cap, and validate says so. The lab checks every 600 s (its fault tests break
ranks on purpose): these tests shorten the interval for themselves and give the lab its own settings back. Last, a
wrong model path, where the cap left vLLM down: the module's own restore brings the right model back (one vLLM
start fewer in the suite than a restore of its own)."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from conftest import PRELAUNCH_CHECK, api_key, flat, get_models, task_outcome
from test_serving_across_nodes import complete, health, ranks

RECORD = "/var/lib/inferops-vllm-cluster/supervisor/state.json"
INTERVAL, DEADLINE = 4, 5
SHORT = ["-e", f"vllm_cluster_liveness_interval={INTERVAL}", "-e", f"vllm_cluster_liveness_deadline={DEADLINE}",
         "-e", "vllm_cluster_liveness_failures=2", "-e", "vllm_cluster_liveness_backoff=1"]


def record(lab) -> dict:
    return json.loads(lab.node("spark-1", "cat", RECORD).stdout)


def wait_for(what: str, seconds: float, test):
    """test() until it returns something true; its value. Fails naming what did not happen."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            found = test()
        except (OSError, ValueError, subprocess.CalledProcessError):
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        time.sleep(1)


def serving_again(lab, since: float, seconds: float = 240) -> float:
    """Seconds from `since` until a completion answers (the supervisor's log in the failure)."""
    try:
        wait_for("a completion", seconds, lambda: complete() > 0)
    except AssertionError as failed:
        log = lab.node("spark-1", "docker", "logs", "--tail", "30", "vllm-cluster-supervisor", check=False)
        raise AssertionError(f"{failed}; the supervisor said:\n{log.stdout}{log.stderr}") from None
    return round(time.time() - since, 1)


def test_a_validate_beside_another_run_neither_writes_nor_removes_the_pause_flag(lab, tmp_path):
    """A converge in progress has told the supervisor to stand back (its flag); a --tags validate meanwhile (another
    operator's, a monitor's) changes no container, so it neither writes the flag nor removes the other run's."""
    flag = RECORD.rsplit("/", 1)[0] + "/paused"
    lab.node("spark-1", "touch", flag)
    try:
        result = lab.playbook(tmp_path, "--tags", "validate")
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        assert lab.node("spark-1", "test", "-e", flag, check=False).returncode == 0, "validate removed another run's flag"
        for task in ("Write the supervisor's pause flag", "Remove the supervisor's pause flag"):
            section = next(part for part in output.split("\nTASK [") if part.startswith(task))
            assert re.search(r"^skipping: \[spark-1\]", section, re.M), section
    finally:
        lab.node("spark-1", "rm", "-f", flag)


def test_a_run_limited_to_a_worker_pauses_the_heads_supervisor_too(lab, tmp_path):
    """README's "restart one worker" runs with --limit spark-2: the head's supervisor must stand back through it too
    (the worker's restart takes vLLM's ranks down with it), so the flag is written on the head whatever the limit,
    and removed again."""
    directory = RECORD.rsplit("/", 1)[0]
    assert lab.node("spark-1", "test", "-d", directory, check=False).returncode == 0
    before = lab.containers()
    try:
        result = lab.playbook(tmp_path, "--limit", "spark-2", "--tags", "supervisor")
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-3000:]
        for task in ("Write the supervisor's pause flag", "Remove the supervisor's pause flag"):
            section = next((part for part in output.split("\nTASK [") if part.startswith(task)), "")
            assert re.search(r"^ok: \[spark-2 -> spark-1[](]", section, re.M), section or output[-3000:]
        assert lab.node("spark-1", "test", "-e", directory + "/paused", check=False).returncode != 0
        assert lab.containers() == before
    finally:
        lab.node("spark-1", "rm", "-f", directory + "/paused")


def test_a_second_copy_of_the_inventory_takes_the_supervisors_secret_and_restarts_none(lab, tmp_path):
    """A controller without the supervisors' secret (records elsewhere: another copy of the inventory) takes the one
    the head's supervisor runs with, keeps it owner only, and its run changes no container (it made a new one, and
    every supervisor restarted with it)."""
    records = tmp_path / "records"
    before = lab.containers()
    head_secret = lab.node("spark-1", "cat", RECORD.rsplit("/", 1)[0] + "/secret").stdout.strip()
    result = lab.playbook(tmp_path, "-v", "--tags", "supervisor", "-e", f"vllm_cluster_records_dir={records}")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert len(head_secret) == 48 and head_secret not in output
    kept = records / "supervisor-secret"
    assert kept.read_text().strip() == head_secret
    assert kept.stat().st_mode & 0o777 == 0o600 and records.stat().st_mode & 0o777 == 0o700
    assert lab.containers() == before


@pytest.fixture(scope="module")
def supervised(lab, tmp_path_factory):
    """The supervisor checking every 4 s for this module's tests; then the lab's settings again and vLLM serving (the
    last test leaves it down)."""
    tmp_path = tmp_path_factory.mktemp("supervisor")
    result = lab.playbook(tmp_path, "--tags", "supervisor", *SHORT, "-e", "vllm_cluster_liveness_max_restarts=5")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    began = time.time()
    wait_for("a check that found the cluster serving", 30,
             lambda: (record(lab)["last_check"] or {}).get("at", 0) > began and record(lab)["last_check"]["ok"])
    yield tmp_path
    result = lab.playbook(tmp_path, "--tags", "vllm")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert record(lab)["interval"] == 600 and complete() > 0
    # nothing validated the cluster in a --tags vllm run: vLLM's own pre-launch check did
    assert task_outcome(result.stdout, PRELAUNCH_CHECK, "spark-1") == "ok"
    status, models = get_models(api_key())
    assert status == 200 and [m["id"] for m in models["data"]] == ["tiny-llama"]
    assert get_models(None)[0] == 401
    assert get_models("wrong")[0] == 401


@pytest.mark.restarts_layers
def test_a_stopped_rank_is_found_and_every_rank_restarted_while_health_answers(lab, supervised):
    before = record(lab)["restarts_total"]
    [rank] = [r for r in ranks(lab) if r["address"] == "198.18.1.13"]
    stop = ["docker", "exec", "vllm-cluster-ray-worker", "kill"]
    try:
        lab.node("spark-2", *stop, "-STOP", str(rank["pid"]))
        stopped = time.time()
        during = health()
        # the record is written before the restart (its generation) and again after it (the ranks' logs)
        restarted = wait_for("the supervisor's restart", 60, lambda: record(lab)["restarts_total"] > before
                             and "logs" in record(lab)["last_restart"] and record(lab)["last_restart"])
        back = serving_again(lab, stopped)
    finally:
        lab.node("spark-2", *stop, "-CONT", str(rank["pid"]), check=False)
    assert during == "200", f"/health said {during} with spark-2's rank stopped"
    # found within two intervals and the deadline (a check may have begun just before the stop), a second of slack
    assert restarted["at"] - stopped <= 2 * INTERVAL + DEADLINE + 1, (restarted, stopped)
    assert restarted["reason"] == f"a one-token completion had no answer within {DEADLINE} s (timeout)"
    assert restarted["logs"]["spark-1/vllm-cluster-vllm"], restarted
    # the stopped process went with its group (Ray ended the old driver's actors)
    assert lab.node("spark-2", "docker", "exec", "vllm-cluster-ray-worker", "kill", "-0", str(rank["pid"]),
                    check=False).returncode != 0
    assert wait_for("a check that found it serving", 30, lambda: record(lab)["phase"] == "watching")
    print(f"stopped rank: restart {restarted['at'] - stopped:.1f} s after the stop, serving again after {back} s")


@pytest.mark.restarts_layers
def test_a_node_restarted_twice_in_a_row_serves_again_without_an_ansible_run(lab, supervised):
    # The worker: its Ray container comes back by Docker's policy, vLLM on the head lost its rank there and the
    # leader restarts it once spark-2 is alive in Ray again. (The head restarted: 50-59 s, measured by hand in
    # session 19, its own Ray head and the worker's rejoin on top; not in the suite for its time.)
    began = time.time()
    for attempt in range(2):  # twice in a row: the second while the first is still coming back
        subprocess.run(["docker", "restart", "inferops-lab-spark-2"], check=True, capture_output=True)
    worker = serving_again(lab, began)
    state = record(lab)
    assert state["last_restart"]["reason"] == "spark-1/vllm-cluster-vllm's container is exited", state["last_restart"]
    print(f"node restarts: spark-2 twice in a row, serving again after {worker} s")


@pytest.mark.restarts_layers
def test_a_rank_that_keeps_dying_is_left_down_at_the_cap_and_validate_says_so(lab, supervised):
    result = lab.playbook(supervised, "--tags", "supervisor", *SHORT, "-e", "vllm_cluster_liveness_max_restarts=1")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    # a count of this test's own: no restart of the tests before it within the window
    lab.node("spark-1", "docker", "stop", "vllm-cluster-supervisor")
    lab.node("spark-1", "rm", RECORD)
    lab.node("spark-1", "docker", "start", "vllm-cluster-supervisor")
    wait_for("the new supervisor's first check", 30, lambda: record(lab)["checks"] > 0)
    # vLLM killed each second it runs, until the test ends it (ending `docker exec` would leave the loop running)
    stop = "/tmp/inferops-test-supervisor-stop-killing"
    lab.node("spark-1", "rm", "-f", stop)
    killer = subprocess.Popen(["docker", "exec", "inferops-lab-spark-1", "sh", "-c",
                               f"end=$(($(date +%s) + 120)); while [ ! -e {stop} ] && [ $(date +%s) -lt $end ]; do "
                               "docker kill vllm-cluster-vllm >/dev/null 2>&1; sleep 1; done; rm -f " + stop])
    try:
        gave_up = wait_for("giving up", 90, lambda: record(lab)["gave_up"])
    finally:
        lab.node("spark-1", "touch", stop)
        killer.wait(timeout=30)
    state = record(lab)
    assert state["phase"] == "gave_up" and state["restarts_total"] == 1 and gave_up["restarts"] == 1
    assert gave_up["reason"] == "spark-1/vllm-cluster-vllm's container is exited"
    assert "spark-1/vllm-cluster-vllm" in gave_up["logs"]
    # left down: nothing starts it again
    time.sleep(2 * INTERVAL)
    inspect = lab.node("spark-1", "docker", "inspect", "-f", "{{.State.Status}}", "vllm-cluster-vllm")
    assert inspect.stdout.strip() == "exited" and record(lab)["restarts_total"] == 1

    validate = lab.playbook(supervised, "--tags", "validate", *SHORT)
    output = flat(validate.stdout + validate.stderr)
    assert validate.returncode != 0, output[-3000:]
    assert "[F28] spark-1: the supervisor gave up at " in output and "after 1 restarts within 3600 s" in output
    assert "Fix the cause, then run site.yml (--tags vllm)" in output
    print(output[output.index("[F28]"):].split(" See ")[0])


@pytest.mark.restarts_layers
def test_wrong_model_path_fails_within_bound_with_vllms_error(lab, supervised):
    """Here, after the cap test left vLLM down: `supervised`'s restore (--tags vllm) serves the right model again."""
    started = time.monotonic()
    result = lab.playbook(supervised, "--tags", "vllm", "-e", "vllm_server_model=/models/does-not-exist")
    elapsed = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode != 0
    # vLLM's own error line, from the server's log, and our hint on top of it
    assert "HFValidationError: Repo id must be in the form" in output, output[-3000:]
    assert "/models/does-not-exist looks like a path but does not exist inside the container" in output
    # The health wait ends when the server exits, far inside vllm_server_health_timeout (300 s in the lab).
    assert elapsed < 240, f"took {elapsed:.0f} s"
