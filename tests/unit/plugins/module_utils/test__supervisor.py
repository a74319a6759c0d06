"""The supervisor's decisions (issue #35, F28): what a check says, when to restart every rank, when to give up, what
a follower does, the signatures between them, and what validate and diagnose say of the record."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _supervisor
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._supervisor import Check, Settings

T0 = 1_796_500_000.0
SETTINGS = Settings(interval=10, deadline=5, failures=2, max_restarts=2, window=600, backoff=20, backoff_max=60,
                    start_grace=100)
UP = {"spark-1/vllm": "running", "spark-2/vllm": "running"}
STARTS = {"spark-1/vllm": "2026-12-06T00:00:00Z", "spark-2/vllm": "2026-12-06T00:00:01Z"}


def serving(at: float = T0, tokens: float = 100, running: float = 0, **fields) -> Check:
    return Check(**dict(dict(at=at, ranks=UP, health=200, completion="ok", tokens=tokens, running=running), **fields))


@pytest.mark.parametrize("check, previous, key", [
    (serving(), None, None),
    # a rank down comes first: the rest follows from it
    (Check(at=T0, ranks={"spark-1/vllm": "running", "spark-2/vllm": "exited"}), None, "rank_down"),
    (Check(at=T0, ranks={"spark-1/vllm": "running", "spark-2/vllm": "absent"}), None, "rank_down"),
    (Check(at=T0, ranks={"spark-1/vllm": "running", "spark-2/*": "silent: refused"}), None, "peer_silent"),
    (serving(health=503), None, "health"),
    (serving(health=0, completion=""), None, "health"),
    # /health 200 and no token: the stuck rank
    (serving(completion="timeout"), None, "no_token"),
    (serving(completion="answered 500: boom"), None, "no_token"),
    # the engine answers and refuses the supervisor's key or model: no restart would change that
    (serving(completion="answered 401: Unauthorized"), None, "refused"),
    (serving(completion="answered 404: model not found"), None, "refused"),
    # no token but the engine made tokens meanwhile: busy, not stuck
    (serving(completion="timeout", tokens=100, tokens_after=140), None, None),
    (serving(completion="timeout", tokens=100, tokens_after=100), None, "no_token"),
    (serving(completion="timeout", tokens=None, tokens_after=140), None, "no_token"),
    # requests running at both checks and no token made between them: stalled
    (serving(at=T0 + 10, tokens=100, running=3), serving(tokens=100, running=2), "stalled"),
    (serving(at=T0 + 10, tokens=180, running=3), serving(tokens=100, running=2), None),
    # nothing was running before: nothing had to rise
    (serving(at=T0 + 10, tokens=100, running=3), serving(tokens=100, running=0), None),
    (serving(at=T0 + 10, tokens=None, running=3), serving(tokens=100, running=2), None),
])
def test_a_check_fails_for_the_first_reason_that_holds(check, previous, key):
    found = _supervisor.failure(check, previous, SETTINGS)
    assert (found[0] if found else None) == key
    if found:
        assert found[1] and "{" not in found[1]


def test_the_sentences_name_the_rank_the_peer_and_the_deadline():
    assert _supervisor.failure(Check(at=T0, ranks={"spark-2/vllm": "exited"}), None, SETTINGS)[1] == \
        "spark-2/vllm's container is exited"
    assert _supervisor.failure(Check(at=T0, ranks={"spark-2/*": "silent: not signed"}), None, SETTINGS)[1] == \
        "spark-2's supervisor did not answer (not signed)"
    assert _supervisor.failure(serving(completion="timeout"), None, SETTINGS)[1] == \
        "a one-token completion had no answer within 5 s (timeout)"


def run(checks: list[tuple[float, str | None, dict]], state: dict | None = None) -> tuple[dict, list[str]]:
    """Feed (seconds after T0, failure key or None, ranks' starts) to decide; the state and each move."""
    state = state or _supervisor.new_state()
    moves = []
    for offset, key, starts in checks:
        failed = (key, f"{key} happened") if key else None
        ranks = dict(UP, **{"spark-2/vllm": "exited"}) if key == "rank_down" else UP
        state, move = _supervisor.decide(state, Check(at=T0 + offset, ranks=ranks), starts, failed, SETTINGS)
        moves.append(move)
    return state, moves


def watching() -> dict:
    """A state that has seen the group serve."""
    return run([(0, None, STARTS)])[0]


def test_the_first_check_gives_a_loading_group_its_start_grace():
    state, moves = run([(0, "health", STARTS), (10, "no_token", STARTS), (20, "health", STARTS)])
    assert moves == ["none"] * 3 and state["phase"] == "starting" and state["consecutive"] == 0
    # past the grace they count
    state, moves = run([(100, "health", STARTS), (110, "health", STARTS)], state)
    assert moves == ["none", "restart"]


def test_a_rank_that_ended_counts_even_while_the_group_starts():
    state, moves = run([(0, "rank_down", STARTS), (10, "rank_down", STARTS)])
    assert moves == ["none", "restart"] and state["restarts_total"] == 1 and state["generation"] == 1


@pytest.mark.parametrize("transitional", _supervisor.TRANSITIONAL)
def test_a_rank_on_its_way_is_forgiven_while_the_group_starts(transitional):
    state = _supervisor.new_state()
    ranks = dict(UP, **{"spark-2/vllm": transitional})
    for offset in (0, 10, 20):
        state, move = _supervisor.decide(state, Check(at=T0 + offset, ranks=ranks), STARTS,
                                         ("rank_down", "on its way"), SETTINGS)
        assert move == "none"


def test_failures_in_a_row_restart_every_rank_and_a_success_between_them_resets_the_count():
    state, moves = run([(10, "no_token", STARTS), (20, None, STARTS), (30, "no_token", STARTS),
                        (40, "no_token", STARTS)], watching())
    assert moves == ["none", "none", "none", "restart"]
    assert state["phase"] == "starting" and state["by_us"] and state["desired"] == "running"
    assert state["last_restart"] == {"at": T0 + 40, "reason": "no_token happened"}


def test_our_own_restart_moves_the_starts_without_resetting_the_count():
    state, moves = run([(10, "no_token", STARTS), (20, "no_token", STARTS)], watching())
    assert moves[-1] == "restart"
    restarted = {rank: "2026-12-06T01:00:00Z" for rank in STARTS}
    state, moves = run([(30, "health", restarted), (40, None, restarted)], state)
    assert moves == ["none", "none"] and state["restarts"] == [T0 + 20] and state["phase"] == "watching"


def test_restarts_wait_a_backoff_that_doubles_and_stop_at_the_cap():
    state, moves = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS)], watching())
    assert moves == ["none", "restart"]
    # the group died again at once: the next restart waits 20 s after the first
    state, moves = run([(30, "rank_down", STARTS), (35, "rank_down", STARTS), (40, "rank_down", STARTS)], state)
    assert moves == ["none", "none", "restart"]
    assert [at - T0 for at in state["restarts"]] == [20, 40]
    # two restarts within the window: the third failure run gives up
    state, moves = run([(50, "rank_down", STARTS), (60, "rank_down", STARTS)], state)
    assert moves == ["none", "give_up"]
    assert state["phase"] == "gave_up" and state["desired"] == "stopped" and state["generation"] == 3
    assert state["gave_up"] == {"at": T0 + 60, "reason": "rank_down happened", "restarts": 2}
    # given up, nothing more is done
    state, moves = run([(70, "rank_down", STARTS), (80, "rank_down", STARTS)], state)
    assert moves == ["none", "none"] and state["phase"] == "gave_up"


@pytest.mark.parametrize("count, wait", [(0, 0), (1, 20), (2, 40), (3, 60), (8, 60)])
def test_the_backoff_doubles_up_to_its_bound(count, wait):
    assert _supervisor.backoff(count, SETTINGS) == wait


def test_restarts_older_than_the_window_do_not_count():
    state = dict(watching(), restarts=[T0 - 700, T0 - 650])
    state, moves = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS)], state)
    assert moves == ["none", "restart"] and state["restarts"] == [T0 + 20]


def test_someone_elses_start_of_the_group_resets_the_count_and_ends_giving_up():
    state, moves = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS), (40, "rank_down", STARTS),
                        (50, "rank_down", STARTS), (60, "rank_down", STARTS), (70, "rank_down", STARTS)], watching())
    assert moves[-1] == "give_up"
    started = dict(STARTS, **{"spark-1/vllm": "2026-12-06T02:00:00Z"})
    state, moves = run([(80, "health", started)], state)
    assert moves == ["none"] and state["phase"] == "starting" and state["restarts"] == [] and not state["gave_up"]
    assert state["desired"] == "running"


def test_an_unknown_start_time_moves_nothing():
    state = watching()
    state, moves = run([(10, "peer_silent", {"spark-1/vllm": STARTS["spark-1/vllm"], "spark-2/vllm": ""})], state)
    assert state["phase"] == "watching" and state["consecutive"] == 1
    assert state["starts"] == STARTS


@pytest.mark.parametrize("acted, leader, move, now_acted", [
    ({"epoch": "e1", "generation": 3}, {"epoch": "e1", "generation": 3, "desired": "running"}, "none", 3),
    # a replayed older message
    ({"epoch": "e1", "generation": 3}, {"epoch": "e1", "generation": 2, "desired": "running"}, "none", 3),
    ({"epoch": "e1", "generation": 3}, {"epoch": "e1", "generation": 4, "desired": "running"}, "restart", 4),
    ({"epoch": "e1", "generation": 3}, {"epoch": "e1", "generation": 4, "desired": "stopped"}, "stop", 4),
    # first contact: no history replayed, but a leader that gave up is followed at once
    (None, {"epoch": "e1", "generation": 4, "desired": "running"}, "none", 4),
    (None, {"epoch": "e1", "generation": 4, "desired": "stopped"}, "stop", 4),
    # the leader lost its record (another epoch, generations from 0): following starts anew, not at 9
    ({"epoch": "e1", "generation": 9}, {"epoch": "e2", "generation": 1, "desired": "running"}, "none", 1),
    ({"epoch": "e1", "generation": 3}, {"epoch": "e1", "generation": "4"}, "none", 3),
    ({"epoch": "e1", "generation": 3}, {"generation": 4}, "none", 3),
    # a leader standing back while an Ansible run changes the cluster moves no follower, not even to a stop
    (None, {"epoch": "e1", "generation": 4, "desired": "stopped", "paused": True}, "none", None),
    ({"epoch": "e1", "generation": 3}, {"epoch": "e1", "generation": 4, "paused": True}, "none", 3),
])
def test_a_follower_moves_once_per_new_generation_of_the_leaders_epoch(acted, leader, move, now_acted):
    found, after = _supervisor.follow(acted, leader)
    assert found == move and after.get("generation") == now_acted


def test_after_a_lost_leader_record_the_next_restart_is_followed():
    acted = _supervisor.follow({"epoch": "e1", "generation": 9}, {"epoch": "e2", "generation": 1})[1]
    assert _supervisor.follow(acted, {"epoch": "e2", "generation": 2, "desired": "running"})[0] == "restart"


def test_a_clock_set_back_does_not_leave_a_restart_in_the_future():
    state = dict(watching(), restarts=[T0 + 3600], since=T0 + 3600)
    state, moves = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS)], state)
    # the future restart counts as now (one backoff at most), not for an hour
    assert moves == ["none", "none"] and state["restarts"] == [T0 + 10]
    state, moves = run([(45, "rank_down", STARTS), (50, "rank_down", STARTS)], state)
    assert "restart" in moves


def test_only_a_message_signed_with_the_clusters_secret_is_read():
    body, signature = _supervisor.signed(b"secret", {"generation": 4, "nonce": "ab"})
    assert _supervisor.verified(b"secret", body, signature) == {"generation": 4, "nonce": "ab"}
    assert _supervisor.verified(b"other", body, signature) is None
    assert _supervisor.verified(b"secret", body.replace(b"4", b"5"), signature) is None
    assert _supervisor.verified(b"secret", body, "") is None
    list_body, list_signature = b"[1]", _supervisor.sign(b"secret", b"[1]")
    assert _supervisor.verified(b"secret", list_body, list_signature) is None


@pytest.mark.parametrize("text, value", [
    ('vllm:generation_tokens_total{engine="0",model_name="m"} 120.0\n', 120.0),
    ('vllm:generation_tokens_total{engine="0"} 100.0\nvllm:generation_tokens_total{engine="1"} 20.0\n', 120.0),
    ("# HELP vllm:generation_tokens_total x\nvllm:generation_tokens_total_created 5\n", None),
    ("vllm:generation_tokens_total 7\n", 7.0),
    ("vllm:generation_tokens_total{engine=\"0\"} NaNx\n", None),
    ("", None),
])
def test_a_metric_is_the_sum_of_its_samples(text, value):
    assert _supervisor.metrics_value(text, "vllm:generation_tokens_total") == value


def test_its_metrics_count_checks_failures_restarts_and_say_whether_it_gave_up():
    state = dict(watching(), failures=4, restarts_total=2, phase="gave_up")
    text = _supervisor.metrics_text(state, "leader", 'spark"1')
    assert 'vllm_cluster_supervisor_checks_total{node="spark\\"1",role="leader"} 1' in text
    assert 'vllm_cluster_supervisor_failures_total{node="spark\\"1",role="leader"} 4' in text
    assert 'vllm_cluster_supervisor_restarts_total{node="spark\\"1",role="leader"} 2' in text
    assert 'vllm_cluster_supervisor_gave_up{node="spark\\"1",role="leader"} 1' in text
    assert 'vllm_cluster_supervisor_up{node="spark\\"1",role="leader"} 1' in text


def test_validate_reports_giving_up_with_the_fix_and_restarts_as_news():
    state, moves = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS), (40, "rank_down", STARTS),
                        (50, "rank_down", STARTS), (60, "rank_down", STARTS), (70, "rank_down", STARTS)], watching())
    assert moves[-1] == "give_up"
    found = _supervisor.report("spark-1", state, T0 + 75, SETTINGS, "/x/state.json", "c-supervisor")
    assert found["problem"].startswith("[F28] spark-1: the supervisor gave up at ")
    assert "after 2 restarts within 600 s" in found["problem"] and "(/x/state.json)" in found["problem"]
    assert "rank_down happened" in found["problem"] and "site.yml (--tags vllm)" in found["problem"]
    state = run([(80, None, dict(STARTS, **{"spark-1/vllm": "later"}))], state)[0]
    found = _supervisor.report("spark-1", state, T0 + 85, SETTINGS, "/x/state.json", "c-supervisor")
    assert found["problem"] == ""
    assert found["lines"][0].startswith("spark-1: supervisor watching, last check ")


def test_a_record_that_is_not_written_any_more_is_a_problem_naming_the_container():
    # three rounds that each wait out their deadlines and a restart: 3 * (10 + 4 * 5) + 70 = 160 s
    record = dict(watching(), written=T0)
    found = _supervisor.report("spark-1", record, T0 + 161, SETTINGS, "/x", "c-supervisor", "https://guide")
    assert found["problem"].startswith("[F28] spark-1: the supervisor last wrote its record 161 s ago")
    assert "`docker logs c-supervisor` on spark-1" in found["problem"] and found["problem"].endswith("guide#f28")
    assert _supervisor.report("spark-1", record, T0 + 159, SETTINGS, "/x", "c")["problem"] == ""


@pytest.mark.parametrize("record", [None, {}, {"version": 99}, [], "text"])
def test_no_record_is_said_and_is_no_problem(record):
    found = _supervisor.report("spark-1", record, T0, SETTINGS, "/x", "c")
    assert found == {"problem": "", "lines": ["spark-1: the supervisor has written no record yet (it writes one after "
                                              "its first check)"]}


def test_settings_come_from_the_role_as_strings_or_numbers():
    settings = Settings.of({"interval": "5", "failures": "2", "deadline": 5, "unknown": 1})
    assert settings.interval == 5.0 and settings.failures == 2 and isinstance(settings.failures, int)
    assert settings.window == Settings().window


def test_the_record_is_json():
    state = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS)], watching())[0]
    assert json.loads(json.dumps(state)) == state


def test_no_restart_while_the_group_cannot_form_and_none_is_counted():
    state = watching()
    ranks = dict(UP, **{"spark-2/*": "silent: refused"})
    for offset in (10, 20, 30):
        state, move = _supervisor.decide(state, Check(at=T0 + offset, ranks=ranks, waits_for=("spark-2",)), STARTS,
                                         ("peer_silent", "spark-2 silent"), SETTINGS)
        assert move == "none"
    assert state["waiting"] == "waiting for spark-2 before restarting the group" and state["restarts"] == []
    state, move = _supervisor.decide(state, Check(at=T0 + 40, ranks=UP), STARTS, ("health", "no"), SETTINGS)
    assert move == "restart" and state["waiting"] == ""


def test_a_wait_said_once_is_not_said_again_by_the_next_failure():
    state = watching()
    state = _supervisor.decide(state, Check(at=T0 + 10, ranks=UP, waits_for=("spark-2",)), STARTS,
                               ("peer_silent", "x"), SETTINGS)[0]
    state = _supervisor.decide(state, Check(at=T0 + 20, ranks=UP, waits_for=("spark-2",)), STARTS,
                               ("peer_silent", "x"), SETTINGS)[0]
    assert state["waiting"]
    state = _supervisor.decide(state, Check(at=T0 + 30, ranks=UP), STARTS, None, SETTINGS)[0]
    assert state["waiting"] == ""


def test_a_refused_completion_never_restarts_and_is_in_the_record():
    state = watching()
    for offset in (10, 20, 30, 40):
        state, move = _supervisor.decide(state, serving(at=T0 + offset, completion="answered 401: no"), STARTS,
                                         _supervisor.failure(serving(completion="answered 401: no"), None, SETTINGS),
                                         SETTINGS)
        assert move == "none"
    assert state["last_failure"]["key"] == "refused" and state["restarts_total"] == 0 and state["consecutive"] == 0


def test_someone_elses_start_during_our_own_start_grace_renews_it():
    state, moves = run([(10, "no_token", STARTS), (20, "no_token", STARTS)], watching())
    assert moves[-1] == "restart" and state["ours"] == sorted(STARTS)
    ours = {rank: "2026-12-06T01:00:00Z" for rank in STARTS}
    state = run([(30, "health", ours)], state)[0]
    assert state["since"] == T0 + 20 and state["ours"] == [] and state["restarts"] == [T0 + 20]
    # an operator restarts the group while it still loads: a new start, its grace from now, the count reset
    theirs = dict(ours, **{"spark-1/vllm": "2026-12-06T01:05:00Z"})
    state = run([(50, "health", theirs)], state)[0]
    assert state["since"] == T0 + 50 and state["restarts"] == []


def test_giving_up_is_no_problem_once_the_group_started_again_since():
    state = run([(10, "rank_down", STARTS), (20, "rank_down", STARTS), (40, "rank_down", STARTS),
                 (50, "rank_down", STARTS), (60, "rank_down", STARTS), (70, "rank_down", STARTS)], watching())[0]
    assert state["phase"] == "gave_up"
    before = _supervisor.report("spark-1", state, T0 + 75, SETTINGS, "/x", "c", started=T0 + 30)
    assert before["problem"].startswith("[F28]")
    after = _supervisor.report("spark-1", state, T0 + 95, SETTINGS, "/x", "c", started=T0 + 90)
    assert after["problem"] == "" and (
        "spark-1: vLLM was started again since the supervisor gave up: its next check resets its count"
        in after["lines"])


GOOD_SECRET = "aB3" * 16


@pytest.mark.parametrize("controller, head, source", [
    (True, GOOD_SECRET, "controller"),  # the controller's own copy, whatever the head holds
    (True, "", "controller"),
    (False, GOOD_SECRET, "head"),  # a second copy of the inventory takes the cluster's
    (False, GOOD_SECRET + "\n", "head"),  # as the node's file holds it
    (False, "", "new"),  # a new cluster
    (False, GOOD_SECRET[:-1], "new"),  # cut short
    (False, GOOD_SECRET[:-1] + "!", "new"),  # not letters and digits
    (False, GOOD_SECRET[:-1] + "é", "new"),  # not ASCII
    (False, GOOD_SECRET + "x", "new"),  # too long
])
def test_a_run_takes_the_controllers_secret_else_a_well_formed_one_on_the_head(controller, head, source):
    assert _supervisor.secret_source(controller, head) == source


def test_the_secret_taken_from_the_head_is_as_long_as_the_one_the_controller_makes():
    """roles/supervisor/tasks/supervise.yml makes the secret with the password lookup; a head's secret of another
    length than secret_source expects would never be taken, and every second controller would make a new one."""
    role = pathlib.Path(__file__).resolve().parents[4] / "roles" / "supervisor"
    tasks = (role / "tasks" / "supervise.yml").read_text()
    made = re.findall(r"lookup\('ansible\.builtin\.password',.*?length=(\d+), chars=\['ascii_letters', 'digits'\]\)",
                      tasks, re.S)
    assert made == [str(_supervisor.SECRET_LENGTH)]
