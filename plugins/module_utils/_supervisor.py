# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The supervisor's decisions: what one check of the serving cluster says, whether to restart the group, when to
give up, and the record and metrics it leaves. Pure functions over plain data, table-tested
(tests/unit/plugins/module_utils/test__supervisor.py).

The supervisor itself (module_utils/_supervisor_program.py) runs in a container on every node that runs a rank: the
head's leads (it asks vLLM for a token, reads /metrics and every rank's container, decides), the others follow (they
report their rank's container and restart or stop it when the leader's generation moves). This file is copied next
to the program onto the nodes, so it imports the standard library only.
Private to the collection."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import typing as t

RECORD_VERSION = 1

# Why a check failed; each with the sentence the record, validate and diagnose show.
MESSAGES = {
    "rank_down": "{rank}'s container is {state}",
    "peer_silent": "{node}'s supervisor did not answer ({detail})",
    "health": "/health answered {status}",
    "no_token": "a one-token completion had no answer within {deadline} s ({detail})",
    "stalled": "generation tokens did not rise in {seconds} s while {running} requests ran",
    "waiting": "waiting for {what} before restarting the group",
    # the engine answered: the supervisor's request is refused (a key changed without a restart, a model renamed)
    "refused": "vLLM refused the supervisor's completion ({detail}): the key or model it was given is not the "
               "server's; no restart helps (site.yml --tags supervisor gives it the current ones)",
    # validate and diagnose (F28)
    "GAVE_UP": "[F28] {host}: the supervisor gave up at {at} UTC after {restarts} restarts within {window} s and "
               "left the cluster down; last failure: {reason}. Its record ({path}) holds each rank's last log lines. "
               "Fix the cause, then run site.yml (--tags vllm): a run that starts the group resets the count. See "
               "{doc}#f28",
    "RESTARTED": "{host}: the supervisor restarted the group {count} time(s) in the last {window} s, the last at "
                 "{at} UTC ({reason})",
    "RESET": "{host}: this run starts vLLM again, which resets the supervisor's count",
    "STARTED_SINCE": "{host}: vLLM was started again since the supervisor gave up: its next check resets its count",
    "NO_RECORD": "{host}: the supervisor has written no record yet (it writes one after its first check)",
    "STALE": "[F28] {host}: the supervisor last wrote its record {age} s ago (it checks every {interval} s): the "
             "cluster is not supervised. Fix: `docker ps -a` and `docker logs {container}` on {host}; site.yml (--tags "
             "supervisor) starts it again. See {doc}#f28",
}


@dataclasses.dataclass(frozen=True)
class Settings:
    interval: float = 30.0
    deadline: float = 20.0
    failures: int = 3
    max_restarts: int = 3
    window: float = 3600.0
    backoff: float = 60.0
    backoff_max: float = 900.0
    # how long a group that just (re)started has to answer before its checks count (vLLM's load)
    start_grace: float = 1800.0

    @classmethod
    def of(cls, values: t.Mapping[str, t.Any]) -> "Settings":
        fields = {field.name: field.type for field in dataclasses.fields(cls)}
        return cls(**{name: (int if kind in ("int", int) else float)(values[name])
                      for name, kind in fields.items() if name in values})


class Check(t.NamedTuple):
    """One look at the cluster: each rank container's state, /health, a one-token completion, /metrics."""
    at: float
    # "node/container" -> Docker's state (running, exited, ...), "absent", or "silent: why" (its node's supervisor
    # did not answer)
    ranks: t.Mapping[str, str]
    health: int = 0
    # "ok", "timeout", or what answered instead; "" when not asked (a rank was already down)
    completion: str = ""
    # vLLM's counters: vllm:generation_tokens_total and vllm:num_requests_running (None: not read)
    tokens: float | None = None
    running: float | None = None
    # vllm:generation_tokens_total again once the completion answered or timed out: tokens made meanwhile mean a
    # busy engine (a queue longer than the deadline), not a stuck one
    tokens_after: float | None = None
    # what the group cannot start without and this supervisor cannot start: a node whose supervisor is silent (it
    # restarts that node's rank), a worker's Ray container not running (Docker restarts it by its policy)
    waits_for: tuple[str, ...] = ()


def failure(check: Check, previous: Check | None, settings: Settings) -> tuple[str, str] | None:
    """(reason key, sentence) for a failed check; None when the cluster serves. A rank down comes first (the other
    checks only follow from it), then /health, then the token, then the counters against the previous check."""
    for rank, state in sorted(check.ranks.items()):
        if state.startswith("silent"):
            node = rank.split("/", 1)[0]
            return "peer_silent", MESSAGES["peer_silent"].format(node=node, detail=state.partition(": ")[2] or "?")
        if state != "running":
            return "rank_down", MESSAGES["rank_down"].format(rank=rank, state=state)
    if check.health != 200:
        return "health", MESSAGES["health"].format(status=check.health or "nothing")
    if check.completion.split(":", 1)[0] in REFUSED:
        return "refused", MESSAGES["refused"].format(detail=check.completion[:200])
    busy = check.tokens is not None and check.tokens_after is not None and check.tokens_after > check.tokens
    if check.completion != "ok" and not busy:
        return "no_token", MESSAGES["no_token"].format(deadline=_number(settings.deadline),
                                                       detail=check.completion or "not asked")
    if (previous is not None and previous.tokens is not None and check.tokens is not None
            and (previous.running or 0) > 0 and (check.running or 0) > 0 and check.tokens <= previous.tokens):
        return "stalled", MESSAGES["stalled"].format(seconds=_number(check.at - previous.at),
                                                     running=_number(check.running))
    return None


def new_state(epoch: str = "") -> dict[str, t.Any]:
    """A record's start. epoch: a random name of this record's life, which the leader's signed state carries: a
    follower that sees another epoch (the leader's record lost, its generations counted again from 0) starts
    following anew instead of waiting for generations it has passed."""
    return {"version": RECORD_VERSION, "epoch": epoch, "phase": "starting", "since": None, "generation": 0,
            "desired": "running",
            "consecutive": 0, "restarts": [], "checks": 0, "failures": 0, "restarts_total": 0, "starts": None,
            "by_us": False,
            "last_check": None, "last_failure": None, "last_restart": None, "gave_up": None}


def restarts_within(state: t.Mapping[str, t.Any], now: float, settings: Settings) -> list[float]:
    return [at for at in state.get("restarts", []) if now - at < settings.window]


def backoff(count: int, settings: Settings) -> float:
    """The wait after the count-th restart within the window before the next may start (none before the first)."""
    return 0.0 if count <= 0 else min(settings.backoff * 2 ** (count - 1), settings.backoff_max)


# Answers of a serving engine that refuses the request itself: a restart would not change them (counted as no
# restart, shown in the record).
REFUSED = ("answered 401", "answered 403", "answered 404")
# A rank container in one of these states is on its way (a restart in progress): forgiven while the group starts.
TRANSITIONAL = ("created", "restarting", "removing")


def started_by_others(known: t.Mapping[str, str] | None, starts: t.Mapping[str, str],
                      ours: t.Iterable[str] = ()) -> tuple[bool, list[str]]:
    """Whether a rank started since the last check (Docker's StartedAt moved) other than by this supervisor, and the
    ranks whose start after its own restart is still to come. `ours`: those ranks; the first move of each is its own
    restart's, a second one (or one of another rank) someone else's. The first check counts as someone else's: the
    group may be loading."""
    pending = set(ours)
    if known is None:
        return True, sorted(pending)
    moved = {rank for rank, started in starts.items() if known.get(rank) and started and known[rank] != started}
    return bool(moved - pending), sorted(pending - moved)


def decide(state: t.Mapping[str, t.Any], check: Check, starts: t.Mapping[str, str], failed: tuple[str, str] | None,
           settings: Settings) -> tuple[dict[str, t.Any], str]:
    """The state after one check and what to do: "none", "restart" (every rank, together) or "give_up" (stop every
    rank and keep the record).

    starts: when each rank container of the group started (Docker's StartedAt; "" where unknown). One that moves
    other than by this supervisor's own restart (started_by_others) means someone else (an Ansible run, an operator)
    started it: the count starts again and the group has its start grace, as after a restart of our own. While the
    group starts (start_grace since then), /health, the token and a silent peer are forgiven, a rank that ended is
    not.
    """
    now = check.at
    new = dict(state)
    # a clock set back must not leave a restart, or a start, in the future (blocking every restart until then)
    new["restarts"] = [min(float(at), now) for at in state.get("restarts", [])]
    if new.get("since") is not None:
        new["since"] = min(float(new["since"]), now)
    new["checks"] = state.get("checks", 0) + 1
    new["last_check"] = {"at": now, "ok": failed is None, "reason": failed[1] if failed else ""}
    new["waiting"] = ""
    others, new["ours"] = started_by_others(state.get("starts"), starts, state.get("ours") or ())
    if others:
        new.update(phase="starting", since=now, consecutive=0, restarts=[], gave_up=None, desired="running",
                   by_us=False, ours=[])
    new["starts"] = dict(state.get("starts") or {}, **{rank: started for rank, started in starts.items() if started})
    if failed is None:
        new.update(phase="watching", consecutive=0, by_us=False, ours=[])
        return new, "none"
    new["failures"] = state.get("failures", 0) + 1
    new["last_failure"] = {"at": now, "reason": failed[1], "key": failed[0]}
    if new["phase"] == "gave_up" or failed[0] == "refused":
        return new, "none"
    starting = new["phase"] == "starting" and now - (new.get("since") or now) < settings.start_grace
    if starting and _forgiven_while_starting(check, failed[0]):
        return new, "none"
    new["consecutive"] = state.get("consecutive", 0) + 1
    if new["consecutive"] < settings.failures:
        return new, "none"
    recent = restarts_within(new, now, settings)
    new["restarts"] = recent
    if len(recent) >= settings.max_restarts:
        new.update(phase="gave_up", desired="stopped", generation=state.get("generation", 0) + 1, by_us=False, ours=[],
                   gave_up={"at": now, "reason": failed[1], "restarts": len(recent)})
        return new, "give_up"
    if recent and now - recent[-1] < backoff(len(recent), settings):
        return new, "none"
    if check.waits_for:
        # a restart now would start a group that cannot form (vLLM would wait for a placement, or a rank, for its
        # whole start grace): wait, counting no restart
        new["waiting"] = MESSAGES["waiting"].format(what=", ".join(check.waits_for))
        return new, "none"
    new.update(phase="starting", since=now, consecutive=0, restarts=recent + [now], desired="running", by_us=True,
               ours=sorted(new.get("starts") or {}),
               restarts_total=state.get("restarts_total", 0) + 1, generation=state.get("generation", 0) + 1,
               last_restart={"at": now, "reason": failed[1]})
    return new, "restart"


def _forgiven_while_starting(check: Check, key: str) -> bool:
    if key != "rank_down":
        return True
    return all(state == "running" or state in TRANSITIONAL for state in check.ranks.values())


def follow(acted: t.Mapping[str, t.Any] | None, leader: t.Mapping[str, t.Any]) -> tuple[str, dict[str, t.Any]]:
    """A follower's move from the leader's signed state, and what it has acted on since: "restart" or "stop" its ranks
    once per generation of the leader's epoch, else "none". The first contact with an epoch replays none of its
    history, but a leader that has given up (every rank stopped) is followed at once."""
    generation, epoch = leader.get("generation"), leader.get("epoch")
    if not isinstance(generation, int) or not isinstance(epoch, str) or leader.get("paused"):
        # a leader standing back while an Ansible run changes the cluster: the run starts and stops the ranks
        return "none", dict(acted or {})
    stop = "stop" if leader.get("desired") == "stopped" else "restart"
    if not acted or acted.get("epoch") != epoch:
        return ("stop" if stop == "stop" else "none"), {"epoch": epoch, "generation": generation}
    if generation <= int(acted.get("generation", 0)):
        return "none", dict(acted)
    return stop, {"epoch": epoch, "generation": generation}


# The supervisors' shared secret: letters and digits (the controller's password lookup makes it so), this long.
SECRET_LENGTH = 48


def secret_source(controller_has_secret: bool, head_secret: str) -> str:
    """Where a run takes the supervisors' secret from: the controller's own copy ("controller"); else the head's, a
    secret the cluster already runs with, which a second copy of the inventory takes instead of making another that
    would restart every supervisor ("head"); else a new one ("new"). A head's file that is not such a secret (empty,
    cut short, edited) is not taken."""
    if controller_has_secret:
        return "controller"
    text = (head_secret or "").strip()
    if len(text) == SECRET_LENGTH and text.isascii() and text.isalnum():
        return "head"
    return "new"


def sign(secret: bytes, body: bytes) -> str:
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def signed(secret: bytes, document: t.Mapping[str, t.Any]) -> tuple[bytes, str]:
    body = json.dumps(document, sort_keys=True).encode()
    return body, sign(secret, body)


def verified(secret: bytes, body: bytes, signature: str) -> dict[str, t.Any] | None:
    """The document a peer sent, or None when its signature is not the cluster's (forged, or another secret)."""
    if not hmac.compare_digest(sign(secret, body), str(signature or "")):
        return None
    try:
        document = json.loads(body)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def metrics_value(text: str, name: str) -> float | None:
    """The sum of a Prometheus text's samples of one metric (every label set); None when absent."""
    total, seen = 0.0, False
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        rest = line[len(name):]
        if rest[:1] not in ("{", " "):
            continue
        try:
            total += float(rest.rsplit(" ", 1)[-1])
            seen = True
        except ValueError:
            continue
    return total if seen else None


def metrics_text(state: t.Mapping[str, t.Any], role: str, node: str) -> str:
    """The supervisor's own /metrics, Prometheus text format."""
    labels = f'{{node="{_label(node)}",role="{_label(role)}"}}'
    last = state.get("last_check") or {}
    lines = [
        "# HELP vllm_cluster_supervisor_checks_total Checks of the serving cluster.",
        "# TYPE vllm_cluster_supervisor_checks_total counter",
        f"vllm_cluster_supervisor_checks_total{labels} {state.get('checks', 0)}",
        "# HELP vllm_cluster_supervisor_failures_total Checks that failed.",
        "# TYPE vllm_cluster_supervisor_failures_total counter",
        f"vllm_cluster_supervisor_failures_total{labels} {state.get('failures', 0)}",
        "# HELP vllm_cluster_supervisor_restarts_total Restarts of the group by the supervisor.",
        "# TYPE vllm_cluster_supervisor_restarts_total counter",
        f"vllm_cluster_supervisor_restarts_total{labels} {state.get('restarts_total', 0)}",
        "# HELP vllm_cluster_supervisor_up Whether the last check found the cluster serving.",
        "# TYPE vllm_cluster_supervisor_up gauge",
        f"vllm_cluster_supervisor_up{labels} {1 if last.get('ok') else 0}",
        "# HELP vllm_cluster_supervisor_gave_up Whether it stopped restarting (the cap) and left the cluster down.",
        "# TYPE vllm_cluster_supervisor_gave_up gauge",
        f"vllm_cluster_supervisor_gave_up{labels} {1 if state.get('phase') == 'gave_up' else 0}",
        "# HELP vllm_cluster_supervisor_last_check_timestamp_seconds When it last checked.",
        "# TYPE vllm_cluster_supervisor_last_check_timestamp_seconds gauge",
        f"vllm_cluster_supervisor_last_check_timestamp_seconds{labels} {last.get('at') or 0}",
    ]
    return "\n".join(lines) + "\n"


def report(host: str, record: t.Any, now: float, settings: Settings, path: str, container: str,
           doc: str = "", started: float | None = None) -> dict[str, t.Any]:
    """What validate and diagnose say of a leader's record: {"problem": sentence or "", "lines": [...]}. Giving up is a
    problem (F28) unless the group started again since (`started`: when the head's rank container started; the
    supervisor's next check then resets its count); a stale record too (its container is not checking); restarts
    within the window are news."""
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION:
        return {"problem": "", "lines": [MESSAGES["NO_RECORD"].format(host=host)]}
    last = record.get("last_check") or {}
    phase = f"{record.get('phase')} (standing back while an Ansible run changes the cluster)" \
        if record.get("paused") else record.get("phase")
    lines = [f"{host}: supervisor {phase}, last check {_when(last.get('at'))} UTC "
             f"({'serving' if last.get('ok') else last.get('reason') or 'failed'}), "
             f"{record.get('checks', 0)} checks, {record.get('failures', 0)} failed, "
             f"{record.get('restarts_total', 0)} restarts"]
    gave_up = record.get("gave_up")
    if record.get("phase") == "gave_up" and isinstance(gave_up, dict) and started is not None \
            and started > float(gave_up.get("at") or 0):
        lines.append(MESSAGES["STARTED_SINCE"].format(host=host))
    elif record.get("phase") == "gave_up" and isinstance(gave_up, dict):
        problem = MESSAGES["GAVE_UP"].format(host=host, at=_when(gave_up.get("at")), restarts=gave_up.get("restarts"),
                                             window=_number(settings.window), reason=gave_up.get("reason"), path=path,
                                             doc=doc)
        return {"problem": problem, "lines": lines}
    recent = restarts_within(record, now, settings)
    if recent:
        lines.append(MESSAGES["RESTARTED"].format(host=host, count=len(recent), window=_number(settings.window),
                                                  at=_when(recent[-1]),
                                                  reason=(record.get("last_restart") or {}).get("reason", "?")))
    # a round that meets a hung engine waits out its deadlines, the peers and a restart (up to 70 s): the record's
    # heartbeat (written after each round) is late only past three such rounds
    age = now - float(record.get("written") or last.get("at") or 0)
    if age > 3 * (settings.interval + 4 * settings.deadline) + 70:
        return {"problem": MESSAGES["STALE"].format(host=host, age=int(age), interval=_number(settings.interval),
                                                    container=container, doc=doc), "lines": lines}
    return {"problem": "", "lines": lines}


def _when(at: t.Any) -> str:
    import time
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(at)))
    except (TypeError, ValueError):
        return "never"


def _label(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _number(value: t.Any) -> str:
    number = float(value)
    return str(int(number)) if number == int(number) else f"{number:.1f}"
