# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The link gate's decisions: each rank's command, whether a run measures at all (the record of the last gate
against what it was measured with), and the verdict over every rank's answer (F25), with the table and the record
the controller keeps. The measuring itself is _link_probe_program.py, run in the serving image. Private to the
collection."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_probe_program
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env_file import assignments
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

MARKER = "LINK_GATE_RESULT="
PROGRAM_SOURCE = inspect.getsource(_link_probe_program)
# Where NCCL writes its INIT,NET log inside the gate's container (%h host, %p pid): the program reads it back.
NCCL_LOG = "/tmp/nccl-link-gate.%h.%p.log"
NCCL_LOG_GLOB = "/tmp/nccl-link-gate.*.log"
# Seconds a rank may take beyond the measuring budget: the image's Python and torch import, the rendezvous.
GRACE = 90
MODES = ("auto", "always", "off")
# 2: env_sha256 over the names the collective reads, boot_id the boot's id hashed (1 hashed other things).
RECORD_VERSION = 2
# What a run's inputs are made of, per node: a change in any of them measures again (mode auto). The boot: a
# ConnectX-7 can come up degraded after a reboot with nothing else changed; the link's speed as the NIC reports it.
INPUTS = ("machine_id", "boot_id", "image_id", "interface", "address", "mtu", "speed", "env_sha256")
# The settings the figures depend on (not the port, nor the threshold: a record is judged again under another one).
MEASURING = ("hosts", "backend", "max_bytes", "iterations")
# The kernel's id of the running boot (module link_inputs hashes it).
BOOT_ID = "/proc/sys/kernel/random/boot_id"
PROGRAM_SHA256 = hashlib.sha256(PROGRAM_SOURCE.encode()).hexdigest()

CAUSES = ("the wrong HCA or port (vllm_cluster_nccl_ib_hca), an MTU that differs between the nodes (F12), NCCL fallen "
          "back to sockets (F23), NCCL builds that differ between the nodes, or a throttled, shared or degraded link "
          "(a ConnectX-7 left in a degraded state after a cable change: reboot both nodes)")

MESSAGES = {
    "SLOW": "[F25] {pair}: bus bandwidth {figures}, below vllm_cluster_min_bus_bandwidth={threshold} GB/s "
            "(transport {transport}). Tensor parallelism runs this collective at every layer: the "
            "model would serve at this pace. Likely causes: " + CAUSES + ". Nothing of Ray or vLLM was changed. "
            "Fix: {doc}#f25; measure again with site.yml --tags link.",
    "NO_RESULT": "[F25] {host}: the link gate's rank gave no result: {error}. {hint}Nothing of Ray or vLLM was "
                 "changed. Fix: {doc}#f25.",
    "SOCKETS": "[F25] {host}: NCCL carried the gate over {transport} ({devices}) where vllm_cluster_rdma=true asks for "
               "RDMA (NET/IB): the link gives a fraction of its bandwidth this way (F23). Fix: check "
               "vllm_cluster_nccl_ib_hca against `ibdev2netdev` on {host} and that /dev/infiniband reaches the "
               "container; {doc}#f25.",
    "NCCL_BUILDS": "[F25] the nodes load different NCCL builds: {builds}. Two builds of one NCCL version have hung "
                   "after 20-30 minutes under load. Fix: serve one image on every node, without a pip-installed "
                   "NCCL beside the image's own; {doc}#f25.",
    "NO_IMAGE": "[F25] {host}: the serving image {image} is not on the node, so the link gate cannot run there and "
                "nothing that depends on the interconnect goes on. Fix: run site.yml (or --tags docker_runtime, which "
                "loads it) before --tags link; {doc}#f25.",
    "NO_TRANSPORT": "[F25] {host}: NCCL's log names no network transport (NET/IB or NET/Socket), so the gate cannot "
                    "say what carried it. Fix: check that the image's NCCL honours NCCL_DEBUG_FILE; {doc}#f25.",
    "PLAN_MEASURING": "link gate: measuring: {reason}. Record: {record}",
    "PLAN_WOULD_MEASURE": "link gate: would measure (not in check mode): {reason}. Record: {record}",
    "PLAN_NOT_MEASURING": "link gate: not measuring: {reason}. Record: {record}",
}

HINTS = {
    "rendezvous": "The rank could not meet the others at {address}:{port} within {timeout} s: the port is closed on "
                  "the head or the interconnect does not route between the nodes (F19). ",
    "deadline": "The gate outlived its deadline: a rank hung inside a collective (a link that drops large "
                "messages, F12). ",
    "peer": "Another rank ended first: its own message says why. ",
    "output": "The container's output could not be read back (Docker's log driver must be json-file, local or "
              "journald). ",
}


def _guide(settings: t.Mapping[str, t.Any]) -> str:
    return settings.get("guide") or TROUBLESHOOTING


def mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB" if size >= 1 << 20 else f"{size} B"


def container(rank: int, settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """What the gate's container on one node runs: entrypoint, command (the program and its parameters) and the
    environment it adds to the node's pinned one (under NCCL, NCCL's own account of the library and the transport it
    chose, written to a file the program reads back; nothing under Gloo)."""
    params = {
        "rank": int(rank), "world": len(settings["hosts"]), "host": settings["hosts"][int(rank)],
        "address": settings["address"], "port": int(settings["port"]), "backend": settings["backend"],
        "max_bytes": int(settings["max_bytes"]), "iterations": int(settings["iterations"]),
        "budget": int(settings["budget"]), "limit": int(settings["budget"]) + GRACE,
        "connect_timeout": int(settings["connect_timeout"]), "nccl_log_glob": NCCL_LOG_GLOB, "marker": MARKER,
    }
    env = ({"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_DEBUG_FILE": NCCL_LOG}
           if settings["backend"] == "nccl" else {})
    return {"entrypoint": ["python3"], "command": ["-c", PROGRAM_SOURCE, json.dumps(params, sort_keys=True)],
            "env": env}


def parse(output: t.Any) -> dict[str, t.Any] | None:
    """A rank's answer from its container's output (the last marker line), or None."""
    for line in reversed(str(output or "").splitlines()):
        if line.startswith(MARKER):
            try:
                answer = json.loads(line[len(MARKER):])
            except ValueError:
                return None
            return answer if isinstance(answer, dict) else None
    return None


# The env file's names the collective reads (their values measure again when changed): NCCL's, Gloo's, UCX's, the
# torch/MPI socket pinning, CUDA's and the NVIDIA runtime's, libfabric's, the verbs libraries', the threads Gloo
# runs on, and what loads another NCCL or a network plugin. Other names (paths, tokens' files, caches) do not.
TRANSPORT_ENV = re.compile(r"^(NCCL_|GLOO_|UCX_|TP_SOCKET_IFNAME|OMPI_|CUDA_|NVIDIA_|TORCH_|FI_|SHARP_COLL_|HCOLL_|"
                           r"NVSHMEM_|MLX5_|IBV_|RDMAV_|OMP_NUM_THREADS=|LD_LIBRARY_PATH=|LD_PRELOAD=)")


def transport_env_digest(text: str) -> str:
    """sha256 over the env file's lines that set a name the collective reads, sorted (order is no change)."""
    lines = sorted(line for line in (f"{name.strip()}={value.strip()}" for name, value in assignments(text))
                   if TRANSPORT_ENV.match(line))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def node_inputs(read: t.Mapping[str, t.Any]) -> dict[str, str]:
    """One node's inputs, each as text ('' for none)."""
    return {name: str(read.get(name, "") or "") for name in INPUTS}


def _private(name: str, value: t.Any) -> str:
    # systemd asks that a machine id not leave the machine as it is: the record keeps a hash made for this use
    text = str(value if value is not None else "")
    if name == "machine_id" and text:
        return hashlib.sha256(f"inferops.vllm_cluster link gate {text}".encode()).hexdigest()[:16]
    return text


def measured_with(inputs: t.Mapping[str, t.Mapping[str, t.Any]], settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """What a gate's figures depend on: every node's inputs, the gate's own settings and its program."""
    return {"nodes": {host: {name: _private(name, value) for name, value in node_inputs(inputs.get(host) or {}).items()}
                      for host in settings["hosts"]},
            "settings": dict({name: settings[name] for name in MEASURING}, program=PROGRAM_SHA256)}


def fingerprint(inputs: t.Mapping[str, t.Mapping[str, t.Any]], settings: t.Mapping[str, t.Any]) -> str:
    return _digest(measured_with(inputs, settings))


def _digest(document: t.Mapping[str, t.Any]) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _differences(old: t.Mapping[str, t.Any], new: t.Mapping[str, t.Any]) -> list[str]:
    found = []
    for host, values in new["nodes"].items():
        before = (old.get("nodes") or {}).get(host)
        if before is None:
            found.append(f"{host} is new to the gate")
            continue
        found += [f"{host}: {name} {before.get(name, '') or '(none)'} -> {value or '(none)'}"
                  for name, value in values.items() if before.get(name, "") != value]
    if old.get("settings") != new["settings"]:
        found.append("the gate's settings changed")
    return found


def plan(inputs: t.Mapping[str, t.Mapping[str, t.Any]], settings: t.Mapping[str, t.Any],
         record: t.Mapping[str, t.Any] | None, mode: str, present: t.Iterable[str] = ()) -> dict[str, t.Any]:
    """Whether this run measures: {measure, reason, fingerprint, problems}. Mode auto measures when there is no
    passing record of the same inputs, so a run that changes nothing about images, nodes or the interconnect stays
    fast; the record it keeps is judged again under this run's threshold (problems, F25). Every node takes a rank:
    with one left out of the run (--limit, unreachable) nothing is measured, and nothing is refused for it."""
    if mode not in MODES:
        raise ValueError(f"vllm_cluster_link_gate={mode!r} is none of {', '.join(MODES)}")
    if mode == "off":
        return {"measure": False, "fingerprint": "", "problems": [],
                "reason": "vllm_cluster_link_gate=off: the interconnect is not measured before vLLM loads"}
    present = set(present)
    absent = [host for host in settings["hosts"] if host not in present]
    if absent:
        return {"measure": False, "fingerprint": "", "problems": [],
                "reason": f"{', '.join(absent)} take(s) no part in this run (--limit or unreachable) and every node "
                          "holds a rank: not measured"}
    now = measured_with(inputs, settings)
    current = _digest(now)
    guide = _guide(settings)
    missing = [MESSAGES["NO_IMAGE"].format(host=host, image=settings.get("image", "?"), doc=guide)
               for host in settings["hosts"] if not (inputs.get(host) or {}).get("image_id")]
    if missing:
        return {"measure": False, "fingerprint": current, "problems": missing,
                "reason": "a node lacks the serving image"}
    record = record or {}
    measure, reason = _measure(now, record, mode, current)
    problems = [] if measure else _slow(record.get("rows") or [], record.get("pairs") or [], settings,
                                        record.get("transport", "?"))
    if problems:
        reason += f"; judged again under vllm_cluster_min_bus_bandwidth={settings.get('min_bus_bandwidth')}"
    return {"measure": measure, "fingerprint": current, "problems": problems, "reason": reason}


def _measure(now: t.Mapping[str, t.Any], record: t.Mapping[str, t.Any], mode: str, current: str) -> tuple[bool, str]:
    if mode == "always":
        return True, "vllm_cluster_link_gate=always"
    if not record:
        return True, "no gate has measured this cluster yet"
    if not record.get("passed"):
        return True, f"the last gate ({record.get('date', '?')}) failed"
    if record.get("version") != RECORD_VERSION or record.get("fingerprint") != current:
        changed = _differences(record.get("measured_with") or {}, now)
        return True, "what the last gate measured with changed: " + ("; ".join(changed) or "its record's form")
    return False, (f"the gate passed on {record.get('date', '?')} with this image, these nodes, this boot and this "
                   "interconnect (-e vllm_cluster_link_gate=always measures again)")


def valid_record(document: t.Any) -> dict[str, t.Any]:
    """A record as the gate writes it, else {} (a hand-edited or truncated file reads as no record: measure)."""
    if not isinstance(document, dict) or document.get("version") != RECORD_VERSION:
        return {}
    shapes = {"measured_with": dict, "rows": list, "pairs": list, "ranks": dict, "table": list, "problems": list,
              "fingerprint": str, "date": str, "passed": bool}
    if any(not isinstance(document.get(key), kind) for key, kind in shapes.items()):
        return {}
    if not isinstance(document["measured_with"].get("nodes"), dict):
        return {}
    rows = document["rows"] + [pair.get("row") for pair in document["pairs"] if isinstance(pair, dict)]
    if any(not isinstance(row, dict) or not isinstance(row.get("busbw"), (int, float))
           or not isinstance(row.get("bytes"), int) for row in rows):
        return {}
    return document


def _largest(rows: t.Sequence[t.Mapping[str, t.Any]], op: str) -> t.Mapping[str, t.Any] | None:
    mine = [row for row in rows if row.get("op") == op]
    return max(mine, key=lambda row: row.get("bytes", 0)) if mine else None


def _figures(rows: t.Sequence[t.Mapping[str, t.Any]]) -> str:
    return ", ".join(f"{row['busbw']} GB/s in {row['op']} at {mib(row['bytes'])}" for row in rows)


def _slow(rows: t.Sequence[t.Mapping[str, t.Any]], pairs: t.Sequence[t.Mapping[str, t.Any]],
          settings: t.Mapping[str, t.Any], transport: str) -> list[str]:
    """F25 for every figure below the threshold: the cluster's at its largest size in either collective, and each
    node with the head alone (more than two nodes)."""
    threshold = float(settings.get("min_bus_bandwidth") or 0)
    if threshold <= 0:
        return []
    hosts, guide = list(settings["hosts"]), _guide(settings)
    found = []
    slow = [row for row in (_largest(rows, op) for op in ("all_reduce", "all_gather")) if row]
    slow = [row for row in slow if row["busbw"] < threshold]
    if slow:
        found.append(MESSAGES["SLOW"].format(pair=" <-> ".join(hosts), figures=_figures(slow), threshold=threshold,
                                             transport=transport, doc=guide))
    for pair in pairs:
        if pair["row"]["busbw"] < threshold:
            found.append(MESSAGES["SLOW"].format(
                pair=" <-> ".join(hosts[rank] for rank in pair["ranks"] if rank < len(hosts)),
                figures=_figures([pair["row"]]) + " (these two nodes alone)", threshold=threshold,
                transport=transport, doc=guide))
    return found


def _hint(error: str, settings: t.Mapping[str, t.Any]) -> str:
    """The likely cause of a rank's error, by what torch says (the rendezvous, a peer gone, a hung collective)."""
    lowered = error.lower()
    if not error:
        return HINTS["output"]
    if "deadline" in lowered or "watchdog" in lowered or "collective operation timeout" in lowered:
        return HINTS["deadline"]
    if "another rank" in lowered or "closed by peer" in lowered or "connection reset" in lowered:
        return HINTS["peer"]
    if "diststoreerror" in lowered or "waiting for clients" in lowered or "trying to connect to" in lowered:
        return HINTS["rendezvous"].format(address=settings["address"], port=settings["port"],
                                          timeout=settings["connect_timeout"])
    return ""


def _transport(answers: t.Mapping[str, t.Mapping[str, t.Any]]) -> str:
    seen = sorted({(answer.get("link") or {}).get("transport") or "?" for answer in answers.values()})
    return "/".join(seen) or "?"


def verdict(answers: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Every rank's answer (host -> the parsed answer, or None) judged: {passed, problems, rows, pairs, ranks}."""
    hosts = list(settings["hosts"])
    guide = _guide(settings)
    problems = []
    for host in hosts:
        answer = answers.get(host)
        if not answer or not answer.get("ok"):
            error = str((answer or {}).get("error") or "")
            problems.append(MESSAGES["NO_RESULT"].format(host=host, error=error.rstrip(". ") or "no answer in its output",
                                                         hint=_hint(error, settings), doc=guide))
    good = {host: answers[host] for host in hosts if answers.get(host) and answers[host].get("ok")}
    head = good.get(hosts[0]) if hosts else None
    rows = list((head or {}).get("rows") or [])
    pairs = list((head or {}).get("pairs") or [])
    transport = _transport(good)
    if head:
        problems += _slow(rows, pairs, settings, transport)
    if settings.get("backend") == "nccl":
        for host, answer in good.items():
            link = answer.get("link") or {}
            if not link.get("transport"):
                problems.append(MESSAGES["NO_TRANSPORT"].format(host=host, doc=guide))
            elif settings.get("rdma") and link["transport"] != "IB":
                problems.append(MESSAGES["SOCKETS"].format(host=host, transport=link["transport"],
                                                           devices=", ".join(link.get("devices") or []) or "?",
                                                           doc=guide))
        builds = {host: answer.get("nccl") or {} for host, answer in good.items()}
        if len({(build.get("version"), build.get("sha256")) for build in builds.values()}) > 1:
            problems.append(MESSAGES["NCCL_BUILDS"].format(doc=guide, builds="; ".join(
                f"{host} {build.get('version', '?')} {build.get('path', '?')} sha256 {str(build.get('sha256', '?'))[:12]}"
                for host, build in builds.items())))
    ranks = {host: {"link": (answer or {}).get("link") or {}, "nccl": (answer or {}).get("nccl") or {},
                    "torch": (answer or {}).get("torch", ""), "error": (answer or {}).get("error", "")}
             for host, answer in ((host, answers.get(host)) for host in hosts)}
    return {"passed": not problems, "problems": problems, "rows": rows, "pairs": pairs,
            "skipped": list((head or {}).get("skipped") or []), "ranks": ranks, "transport": transport}


def table(judged: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any]) -> list[str]:
    """The figures as nccl-tests prints them, one line each, with what carried them and the threshold."""
    hosts = list(settings["hosts"])
    devices = ", ".join(f"{host} {'/'.join((judged['ranks'].get(host, {}).get('link') or {}).get('devices') or ['?'])}"
                        for host in hosts)
    lines = [f"{len(hosts)} ranks over {settings['backend']} ({judged.get('transport', '?')}: {devices}); "
             f"threshold {settings.get('min_bus_bandwidth')} GB/s bus bandwidth at the largest size",
             f"{'op':>12} {'size':>10} {'time(us)':>11} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12}"]
    lines += [f"{row['op']:>12} {mib(row['bytes']):>10} {row['time_us']:>11} {row['algbw']:>12} {row['busbw']:>12}"
              for row in judged.get("rows") or []]
    lines += [f"{' <-> '.join(hosts[rank] for rank in pair['ranks'])} alone: all_gather {mib(pair['row']['bytes'])} "
              f"busbw {pair['row']['busbw']} GB/s" for pair in judged.get("pairs") or []]
    lines += [f"{skip['op']} {mib(skip['bytes'])} and larger: not measured, they would outlast the gate's budget"
              for skip in judged.get("skipped") or []]
    return lines


def record(judged: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any],
           inputs: t.Mapping[str, t.Mapping[str, t.Any]], date: str, cluster: str) -> dict[str, t.Any]:
    """What the controller keeps of a gate (diagnose shows it; mode auto compares the next run with it)."""
    return {"version": RECORD_VERSION, "cluster": cluster, "date": date, "passed": judged["passed"],
            "fingerprint": fingerprint(inputs, settings), "measured_with": measured_with(inputs, settings),
            "threshold_gbps": float(settings.get("min_bus_bandwidth") or 0), "backend": settings["backend"],
            "transport": judged.get("transport", ""), "rows": judged["rows"], "pairs": judged["pairs"],
            "skipped": judged["skipped"], "ranks": judged["ranks"], "problems": judged["problems"],
            "table": table(judged, settings)}
