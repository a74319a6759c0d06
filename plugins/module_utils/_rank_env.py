# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What vLLM's ranks run with, read from their own processes: each node's pinning, and no secret carried in.

vLLM's Ray executor copies the driver's environment into every rank it places: the V1 executor overwrites the
rank's own variables (NCCL_*, UCX_*, VLLM_*, HF_* and its registered names), the V2 executor fills in every variable
the rank lacks. Only `VLLM_HOST_IP` and a few device lists are left out, plus the names listed in
`$VLLM_CONFIG_ROOT/ray_non_carry_over_env_vars.json`. Without that list a rank on spark-2 runs with spark-1's
interface names the day the two name their ports differently, and the API key reaches every rank process.
The collection writes the list (`non_carry_over`); validate reads the rank processes on each node
(`rank_problems`) and what the driver would still carry (`carried_problems`). A process's environment in
/proc is the one it started with: what vLLM sets inside a rank afterwards shows only as the driver's carry,
which is why both are read. Private to the collection.
"""

from __future__ import annotations

import json
import os
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError, status
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._secrets import SECRET_NAME_PATTERN, secret_name

NON_CARRY_OVER_FILE = "ray_non_carry_over_env_vars.json"
# Set per node by the env file beside the interconnect pins: another node's value is wrong here.
PER_NODE_NAMES = ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_DISABLE")
# Secrets the containers may hold (the launcher exports the API key): no rank needs them.
SECRET_NAMES = ("VLLM_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "RAY_AUTH_TOKEN")
# The command line Ray gives an actor's worker process: ray::<class> (RayWorkerProc under the V2 executor,
# RayWorkerWrapper under V1), then ray::<class>.<method> once it runs one.
RANK_PROCESS_PREFIX = "ray::RayWorker"

# Run with the container's python3: prints {pid: {"cmdline": str, "env": {name: value}, "secrets": [name]}}
# for every process (argv[1]: the pinned names whose values are wanted; argv[2]: _secrets.SECRET_NAME_PATTERN).
# Secret values never leave it.
READ_PROCESSES = r"""
import json, os, re, sys
pinned = set(json.loads(sys.argv[1]))
secret = re.compile(sys.argv[2], re.I)
found = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        continue
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = [e.decode(errors="replace") for e in f.read().split(b"\0") if b"=" in e]
    except OSError:
        found[pid] = {"cmdline": cmdline, "env": None, "secrets": []}
        continue
    env = {}
    for name, value in (e.split("=", 1) for e in entries):
        env.setdefault(name, value)  # getenv() and Python take a repeated name's first value
    found[pid] = {"cmdline": cmdline, "env": {n: v for n, v in env.items() if n in pinned and not secret.search(n)},
                  "secrets": sorted(n for n in env if secret.search(n))}
print(json.dumps(found))
"""

MESSAGES = {
    "rank": "[F7] {host}: vLLM's rank process {pid} ({cmdline}) in {container} runs with {drift}: NCCL, Gloo or UCX "
            "there would use another node's interface or address than {host}'s own.",
    "rank_secret": "[F7] {host}: vLLM's rank process {pid} in {container} holds {names}: a secret no rank needs.",
    "rank_unread": "[F7] {host}: vLLM's rank process {pid} ({cmdline}) in {container} does not let its environment be "
                   "read: its pinning cannot be checked.",
    "carried": "[F7] {host}: vLLM's Ray executor would copy {names} from {host}'s driver ({container}) into every "
               "rank on every node ({list} does not name {them}): a rank on another node would run with {host}'s "
               "pinning, and a secret would reach every rank process.",
    "fix": "Fix: run site.yml, which writes the list (vllm_cluster_ray_non_carry_over) and restarts the vLLM server "
           "with it; if the image's vLLM ignores {list}, use vllm_cluster_backend=mp.",
}


def non_carry_over(pinned: t.Iterable[str], node_env_names: t.Iterable[str] = (),
                   server_env_names: t.Iterable[str] = ()) -> list[str]:
    """What the driver must not copy into its ranks: every name the env file pins per node, every known secret,
    every name of the extra env every container gets from its own node's file (`node_env_names`: a host_vars value
    on the head must not replace a worker's), and the secret-named ones of the server's own (`server_env_names`;
    the others, VLLM_CPU_KVCACHE_SPACE and the like, the ranks need)."""
    names = set(map(str, pinned)) | set(PER_NODE_NAMES) | set(SECRET_NAMES) | set(map(str, node_env_names))
    names |= {str(name) for name in server_env_names if secret_name(str(name))}
    return sorted(names)


def rank_processes(processes: t.Mapping[str, t.Mapping[str, t.Any]]) -> dict[str, t.Mapping[str, t.Any]]:
    """The processes (READ_PROCESSES' output) that are vLLM ranks placed by Ray."""
    return {pid: info for pid, info in processes.items() if str(info.get("cmdline", "")).startswith(RANK_PROCESS_PREFIX)}


def _shown(text: t.Any, limit: int = 60) -> str:
    """A process's own text (its command line, a value it holds) in a message: one line, printable, bounded."""
    escaped = str(text).encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= limit else escaped[:limit] + "..."


def _drift(env: t.Mapping[str, str], expected: t.Mapping[str, t.Any]) -> list[str]:
    return [f"{name}={_shown(env[name])} (pinned: {value})" if name in env else f"no {name} (pinned: {value})"
            for name, value in sorted(expected.items()) if env.get(name) != str(value)]


def rank_problems(host: str, container: str, processes: t.Mapping[str, t.Mapping[str, t.Any]],
                  expected: t.Mapping[str, t.Any]) -> list[str]:
    """One sentence per rank process on host whose pinned variables are not host's own, or that started with one of
    the collection's secrets (a secret of the inventory's extra env is the user's to give every container)."""
    problems = []
    for pid, info in sorted(rank_processes(processes).items(), key=lambda item: int(item[0])):
        if info.get("env") is None:
            problems.append(MESSAGES["rank_unread"].format(host=host, pid=pid, cmdline=_shown(info.get("cmdline", "")),
                                                           container=container))
            continue
        drift = _drift(info["env"], expected)
        if drift:
            problems.append(MESSAGES["rank"].format(host=host, pid=pid, cmdline=_shown(info.get("cmdline", "")),
                                                    container=container, drift=", ".join(drift)))
        secrets = sorted(set(info.get("secrets", [])) & set(SECRET_NAMES))
        if secrets:
            problems.append(MESSAGES["rank_secret"].format(host=host, pid=pid, container=container,
                                                           names=", ".join(secrets)))
    return problems


def parse_names(text: str) -> set[str]:
    """The names of a non-carry-over file as vLLM reads it: a JSON list; anything else is no list at all (vLLM
    then carries everything)."""
    try:
        names = json.loads(text)
    except ValueError:
        return set()
    return {str(name) for name in names} if isinstance(names, list) else set()


def carried_names(processes: t.Mapping[str, t.Mapping[str, t.Any]], guarded: t.Iterable[str],
                  excluded: t.Iterable[str]) -> list[str]:
    """The guarded variables the driver's processes hold that the list does not exclude: what vLLM's Ray executor
    copies into every rank (never VLLM_HOST_IP, which it leaves out itself)."""
    held: set[str] = set()
    for info in processes.values():
        held |= set(info.get("env") or {}) | set(info.get("secrets", []))
    return sorted((held & set(guarded)) - set(excluded) - {"VLLM_HOST_IP"})


def carried_problems(host: str, container: str, names: t.Sequence[str], list_path: str) -> list[str]:
    """The sentence naming what the driver on host would carry into every rank; none when nothing."""
    if not names:
        return []
    return [MESSAGES["carried"].format(host=host, container=container, names=", ".join(names), list=list_path,
                                       them="it" if len(names) == 1 else "them")]


# Module rank_env_check's options (plugins/modules/rank_env_check.py documents them), checked by the module where it
# runs as one and by its action on the controller where the node's Python runs run() directly (_direct).
ARGUMENT_SPEC = {
    "container": {"type": "str", "required": True},
    "expected": {"type": "dict", "required": True},
    "driver_container": {"type": "str", "default": ""},
    "guarded": {"type": "list", "elements": "str", "default": []},
    "non_carry_over_file": {"type": "str", "default": f"/root/.config/vllm/{NON_CARRY_OVER_FILE}"},
    "host": {"type": "str", "default": ""},
    "docker_host": {"type": "str", "default": "unix:///var/run/docker.sock"},
}


def read_processes(client: DockerCli, container: str, names: list[str]) -> dict | None:
    """READ_PROCESSES' answer from inside container; None when the container does not run (or stopped meanwhile).
    Asked straight away: the container's state is read only where the answer fails (a serving node's check is one
    docker CLI call a container, not two)."""
    rc, out, err = client.exec(container, ["python3", "-c", READ_PROCESSES, json.dumps(sorted(names)), SECRET_NAME_PATTERN])
    if rc != 0:
        if status(client.inspect(container)) != "running":
            return None
        # stderr only: stdout would hold the command lines of every process the reader saw
        raise DockerError(f"reading the processes of {container} failed ({rc}): {err.strip()[-300:]}")
    return json.loads(out)


def read_list(client: DockerCli, container: str, path: str) -> set[str]:
    """The names of the non-carry-over list as vLLM in container reads them; none when the file is absent."""
    rc, out, err = client.exec(container, ["cat", path])
    if rc == 0:
        return parse_names(out)
    # cat's own words for the list's path, not the docker CLI's for a socket that is gone (Docker 28 ends those in
    # "connect: no such file or directory" too)
    if f"{path}: no such file or directory".lower() in err.lower():
        return set()
    raise DockerError(f"reading {path} in {container} failed ({rc}): {err.strip()[-300:]}")


def run(params: t.Mapping[str, t.Any], node: t.Any) -> dict[str, t.Any]:
    """Module rank_env_check's result for its validated params; node: AnsibleModule or _direct.Node (run_command,
    get_bin_path). ModuleError naming every problem found, or why the ranks could not be read."""
    p = params
    host = p["host"] or os.uname().nodename
    client = DockerCli(node.run_command, node.get_bin_path("docker", required=True), p["docker_host"], 60)
    problems, ranks, carried = [], {}, []
    try:
        processes = read_processes(client, p["container"], list(p["expected"]))
        if processes is not None:
            ranks = {pid: {"cmdline": info["cmdline"], "env": info["env"]}
                     for pid, info in rank_processes(processes).items()}
            problems += rank_problems(host, p["container"], processes, p["expected"])
        if p["driver_container"]:
            driver = read_processes(client, p["driver_container"], p["guarded"])
            if driver is not None:
                excluded = read_list(client, p["driver_container"], p["non_carry_over_file"])
                carried = carried_names(driver, p["guarded"], excluded)
                problems += carried_problems(host, p["driver_container"], carried, p["non_carry_over_file"])
    except (DockerError, ValueError) as exc:
        raise ModuleError(f"{host}: could not read what vLLM's ranks run with: {exc}", ranks=ranks, carried=[]) from None
    if problems:
        raise ModuleError(" ".join(problems + [MESSAGES["fix"].format(list=p["non_carry_over_file"])]),
                          ranks=ranks, carried=carried)
    return {"changed": False, "ranks": ranks, "carried": carried}
