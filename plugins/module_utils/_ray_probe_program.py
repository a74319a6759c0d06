# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The program ray_cluster_check runs where Ray is (inside the Ray head's container, `python -c <this file>
<parameters as JSON>`): it asks Ray itself and prints one line, the marker then JSON. Modes:
  table  - wait (bounded) until enough nodes are alive, one per address, then return ray.nodes()
           (and, asked for vllm_ranks, the ranks of the newest vLLM driver from Ray's actor table)
  dryrun - create vLLM's placement group and let every worker dial the driver's address

With "session" in its first parameters it answers more requests after the first, one JSON line of parameters each
on stdin, until stdin ends: Python, Ray's import and ray.init (0.9 s) are paid once per check, not once per step.

It runs with Python 3 and Ray only: it imports nothing from this collection, and Ray only when run, so that
importing it (to read its source, to test it) does nothing. _ray_probe.py sends its source. Private to the
collection."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import sys
import threading
import time


def emit(params, result):
    sys.stdout.write("\n" + params["marker"] + json.dumps(result) + "\n")
    sys.stdout.flush()


def node_rows(ray):
    return [{k: n.get(k) for k in ("NodeID", "Alive", "NodeManagerAddress", "NodeManagerHostname", "Resources")}
            for n in ray.nodes()]


def vllm_rank_rows():
    # vLLM's Ray executor runs every rank as an actor named vllm_Worker_<instance>[_TPn][_PPn]
    # (RayWorkerProc; RayWorkerWrapper in the older executor), under the job of its driver. Returned:
    # the ranks of the newest such job, alive or not, each with why Ray says it died.
    from ray._private import state as ray_state  # pylint: disable=import-error

    jobs = {j["JobID"]: j for j in ray_state.jobs()}
    ranks = []
    for actor in ray_state.actors().values():
        name = actor.get("Name") or ""
        if not (name.startswith("vllm_Worker") or actor.get("ActorClassName") in ("RayWorkerProc", "RayWorkerWrapper")):
            continue
        job = jobs.get(actor.get("JobID"), {})
        address = actor.get("Address") or {}
        cause = ""
        death = actor.get("DeathCause")
        if death is not None:
            try:
                cause = death.actor_died_error_context.error_message
            except AttributeError:
                cause = ""
            cause = cause or str(death).replace("\n", " ")
        ranks.append({"name": name or actor.get("ActorClassName"), "state": actor.get("State"),
                      "address": address.get("IPAddress", ""), "pid": actor.get("Pid"),
                      "job_id": actor.get("JobID"), "job_dead": bool(job.get("IsDead", True)),
                      "job_start": job.get("StartTime", 0), "driver_ip": job.get("DriverIPAddress", ""),
                      "cause": cause[:400]})
    newest = max((r["job_start"] for r in ranks), default=None)
    return [r for r in ranks if r["job_start"] == newest]


def never_heals(live, cidr):
    """An address outside the interconnect (F1, F4), or one address held by two machines (F8), stays so however
    long one waits; a restarted node's stale raylet at its own address does go away."""
    for r in live:
        try:
            if cidr is not None and ipaddress.ip_address(r["NodeManagerAddress"]) not in cidr:
                return True
        except ValueError:
            return True
    names = {}
    for r in live:
        names.setdefault(r["NodeManagerAddress"], set()).add(r["NodeManagerHostname"])
    return any(len(hostnames) > 1 for hostnames in names.values())


def table(ray, params):
    started = time.monotonic()
    want_count = params.get("wait_for_count") or 0
    want_ips = set(params.get("wait_for_ips") or [])
    cidr = ipaddress.ip_network(params["cidr"], strict=False) if params.get("cidr") else None
    while True:
        rows = node_rows(ray)
        live = [r for r in rows if r["Alive"]]
        addresses = {r["NodeManagerAddress"] for r in live}
        if never_heals(live, cidr):
            break
        # A node restarted without a clean stop registers anew while Ray still counts its previous
        # raylet alive at the same address for several seconds: wait until that one is declared dead.
        unique = len(addresses) == len(live)
        if unique and ((want_count and len(live) >= want_count) or (want_ips and want_ips <= addresses)):
            break
        if not want_count and not want_ips:
            break
        if time.monotonic() - started >= params["timeout"]:
            break
        time.sleep(1)
    result = {"nodes": rows, "waited": round(time.monotonic() - started, 2)}
    if params.get("vllm_ranks"):
        result["vllm_ranks"] = vllm_rank_rows()
    return result


def placement(ray, driver_ip, world, timeout):
    """What vLLM's Ray executor asks for (vllm/v1/executor/ray_utils.py): one bundle of one device per rank, the
    first pinned to the driver's node:<VLLM_HOST_IP>, packed."""
    from ray.util.placement_group import placement_group, remove_placement_group  # pylint: disable=import-error

    bundles = [{"GPU": 1.0} for rank in range(world)]
    bundles[0]["node:" + driver_ip] = 0.001
    total = ray.cluster_resources().get("GPU", 0)
    free = ray.available_resources().get("GPU", 0)
    if free < world <= total:
        return {"status": "skipped", "bundles": world, "driver_ip": driver_ip, "bundle_specs": bundles,
                "strategy": "PACK", "detail": "only %s of %s GPUs free: a running vLLM holds them" % (free, total)}
    pg = placement_group(bundles, strategy="PACK")
    placed = pg.wait(timeout_seconds=timeout)
    holders = [n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"] and ("node:" + driver_ip) in n["Resources"]]
    remove_placement_group(pg)
    return {
        "status": "ok" if placed else "failed", "bundles": world, "driver_ip": driver_ip,
        "bundle_specs": bundles, "strategy": "PACK",
        "detail": "placed" if placed else "still pending; node:%s offered by %s; GPUs free %s of %s" % (
            driver_ip, ", ".join(holders) or "no alive node", free, total),
    }


def rendezvous(ray, driver_ip, workers, timeout):
    """Every worker node dials a listener on the driver's address, carrying a 2 MB object (c10d's path)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # pylint: disable=import-error

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((driver_ip, 0))
    listener.listen(len(workers) + 4)
    listener.settimeout(timeout + 5)
    port = listener.getsockname()[1]

    def serve():
        try:
            while True:
                conn = listener.accept()[0]
                conn.recv(64)
                conn.sendall(b"ok")
                conn.close()
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    payload = ray.put(b"\0" * (2 * 1024 * 1024))

    @ray.remote(num_cpus=0, max_retries=0)
    def dial(blob, host, port, timeout):
        try:
            with socket.create_connection((host, port), timeout=timeout) as conn:
                conn.sendall(b"hello")
                if conn.recv(2) != b"ok":
                    return {"status": "connect_failed", "detail": "no answer from the listener"}
            return {"status": "ok", "bytes": len(blob)}
        except OSError as exc:
            return {"status": "connect_failed", "detail": "%s: %s" % (type(exc).__name__, exc)}

    refs = {}
    for n in workers:
        strategy = NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
        refs[n["NodeID"]] = (n, dial.options(scheduling_strategy=strategy).remote(payload, driver_ip, port, timeout))
    ready = ray.wait([ref for node, ref in refs.values()], num_returns=len(refs), timeout=timeout)[0]
    entries = []
    for node_id, (n, ref) in refs.items():
        entry = {"node_id": node_id, "address": n["NodeManagerAddress"], "driver_ip": driver_ip, "port": port}
        if ref in ready:
            try:
                entry.update(ray.get(ref))
            except Exception as exc:  # pylint: disable=broad-exception-caught  # any task failure is reported
                entry.update({"status": "task_failed", "detail": "%s: %s" % (type(exc).__name__, str(exc)[:300])})
        else:
            entry.update({"status": "transfer_timeout",
                          "detail": "the task with its 2 MB argument did not finish on that node"})
            ray.cancel(ref, force=True)
        entries.append(entry)
    listener.close()
    return entries


def dryrun(ray, params):
    timeout = params["timeout"]
    driver_ip = params.get("driver_ip") or os.environ.get("VLLM_HOST_IP") or ray.util.get_node_ip_address()
    result = {"driver_ip": driver_ip}
    world = params.get("bundles") or 0
    if world:
        result["placement"] = placement(ray, driver_ip, world, timeout)
    workers = [n for n in ray.nodes() if n["Alive"] and "node:__internal_head__" not in n["Resources"]]
    result["rendezvous"] = (rendezvous(ray, driver_ip, workers, timeout)
                            if workers and params.get("rendezvous", True) else [])
    return result


def main(argv):
    params = json.loads(argv[1])
    # The probe's own deadline, whatever blocks (ray.init on a GCS that accepts and never answers): SIGALRM
    # without a handler ends the process from the kernel, even while Ray's C++ holds the interpreter.
    signal.alarm(int(params.get("limit") or 0))
    import ray  # pylint: disable=import-error,import-outside-toplevel

    ray.init(address=params.get("address") or "auto", logging_level="ERROR", log_to_driver=False)
    while True:
        emit(params, table(ray, params) if params["mode"] == "table" else dryrun(ray, params))
        if not params.get("session"):
            leave()
        # no deadline while the module decides its next step (it may read Docker first); each request sets its own
        signal.alarm(0)
        line = sys.stdin.readline()
        if not line.strip():
            leave()
        params = dict(json.loads(line), session=True, marker=params["marker"])
        # each request's own deadline, as the first one's
        signal.alarm(int(params.get("limit") or 0))


def leave():
    """End the probe once its last answer is out, without Ray's shutdown and the interpreter's teardown of Ray's
    threads: 0.9 s that the module, and so every validate, waited for. Nothing is lost: every answer is written and
    flushed, the dry-run removed its placement group itself, and Ray ends a driver's job when its connection closes,
    as it does for any driver that exits."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
