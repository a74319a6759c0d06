# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a node holds of the cluster, read in one call: containers, images, files, the records the collection keeps.

The layers decide what to change from this read instead of asking one task at a time (each remote task is a Python
start on the node: 0.3-1 s). Never returns a container's environment or a file's content other than the collection's
own JSON records: env files, tokens and keys are described by their sha256 alone. Private to the collection.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import stat
import time
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._docker_cli import DockerCli, DockerError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._engine import answered, ask
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env import pinned_env_drift
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._firewall import table_in_force
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._regular_file import regular_file

# A file hashed whole: env files, tokens, keys and rules are a few KiB; a larger one is described without its hash.
HASH_LIMIT = 16 * 1024 * 1024
# A record of the collection is a few hundred bytes; anything larger at that path is not one.
RECORD_LIMIT = 64 * 1024

_KINDS = ((stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "link"))


def describe_file(path: str, digest: bool = True) -> dict[str, t.Any]:
    """A path as lstat sees it, never following a link: {exists, kind, mode, uid, gid, size, sha256}.

    sha256 only for a regular file of at most HASH_LIMIT bytes, read through a descriptor opened without following a
    link (a link swapped in between lstat and open is refused, not hashed), and only where `digest` (a secret's
    digest would let a guess of it be checked against the output).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {"exists": False}
    except OSError as error:
        return {"exists": False, "error": f"{path}: {error.strerror}"}
    kind = next((name for test, name in _KINDS if test(info.st_mode)), "other")
    described = {"exists": True, "kind": kind, "mode": f"{stat.S_IMODE(info.st_mode):04o}", "uid": info.st_uid,
                 "gid": info.st_gid, "size": info.st_size, "sha256": ""}
    if digest and kind == "file" and info.st_size <= HASH_LIMIT:
        described["sha256"] = _sha256(path)
    return described


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with regular_file(path) as handle:
        if handle is None:
            return ""
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_record(path: str) -> t.Any:
    """One of the collection's JSON records; None where there is none, or what is there is not one."""
    with regular_file(path) as handle:
        # what the descriptor holds, not what lstat saw a moment before: a regular file, small enough to be one
        if handle is None or os.fstat(handle.fileno()).st_size > RECORD_LIMIT:
            return None
        try:
            return json.loads(handle.read(RECORD_LIMIT + 1).decode("utf-8"))
        except ValueError:
            return None


def describe_container(document: t.Mapping[str, t.Any] | None) -> dict[str, t.Any]:
    """What the layers decide from about a container (`docker inspect`'s document), without its environment."""
    if not document:
        return {"exists": False, "status": "absent", "running": False}
    state = document.get("State") or {}
    config = document.get("Config") or {}
    return {"exists": True, "id": document.get("Id", ""), "status": state.get("Status", "unknown"),
            "running": bool(state.get("Running")), "started_at": state.get("StartedAt", ""),
            "finished_at": state.get("FinishedAt", ""), "exit_code": state.get("ExitCode"),
            "image_id": document.get("Image", ""), "labels": dict(config.get("Labels") or {}),
            "restart_policy": ((document.get("HostConfig") or {}).get("RestartPolicy") or {}).get("Name", "")}


def importable(name: str) -> bool:
    """Whether the Python running the module (the node's, as Ansible runs it) imports the module: a broken install
    (requests against an incompatible urllib3) fails here as it would in community.docker's modules."""
    try:
        importlib.import_module(name)
        return True
    except Exception:  # pylint: disable=broad-exception-caught  # any failure to import is the answer
        return False


def _expanded(path: str) -> str:
    return os.path.expanduser(os.path.expandvars(path))


def pinned_env(document: t.Mapping[str, t.Any] | None, expected: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Whether a container (`docker inspect`'s document) exists and which of the pinned variables it holds with
    another value (F7); the rest of its environment, which may hold secrets, is never returned."""
    if not document:
        return {"exists": False, "drift": []}
    return {"exists": True, "drift": pinned_env_drift((document.get("Config") or {}).get("Env") or [], expected)}


def docker_questions(engine: t.Mapping[str, t.Any] | None, containers: t.Iterable[str], images: t.Iterable[str],
                     pinned: t.Mapping[str, t.Any]) -> tuple[list[str], list[str], dict[str, t.Any]]:
    """What the read asks Docker (containers, images, pinned env): all that was asked, unless the engine was asked
    first (`engine`: its answer, _engine.ask) and did not answer. Then nothing: the caller judges that answer (F26)
    instead of failing on Docker's own words."""
    if engine is None or answered(engine):
        return list(containers), list(images), dict(pinned)
    return [], [], {}


def read(client: DockerCli | None, containers: t.Iterable[str], images: t.Iterable[str], files: t.Iterable[str],
         records: t.Iterable[str], clock: t.Callable[[], float],
         python_modules: t.Iterable[str] = (),
         pinned: t.Mapping[str, t.Mapping[str, t.Any]] | None = None,
         secret_files: t.Iterable[str] = ()) -> dict[str, t.Any]:
    """The node's state as the module returns it. DockerError when the engine does not answer."""
    containers, images, pinned = list(containers), list(images), dict(pinned or {})
    state: dict[str, t.Any] = {"containers": {}, "images": {}, "pinned_env": {}}
    if (containers or images or pinned) and client is None:
        raise DockerError("no docker CLI on the node")
    documents: dict[str, t.Any] = {}
    for name in dict.fromkeys(containers + list(pinned)):
        documents[name] = client.inspect(name)
    for name in containers:
        state["containers"][name] = describe_container(documents[name])
    for name, expected in pinned.items():
        state["pinned_env"][name] = pinned_env(documents[name], expected)
    for image in images:
        state["images"][image] = client.image_id(image)
    # keyed by the paths as given (the callers look them up so), read where they point (~ and $VARS expanded)
    state["files"] = {path: describe_file(_expanded(path)) for path in files}
    state["files"].update({path: describe_file(_expanded(path), digest=False) for path in secret_files})
    state["records"] = {path: read_record(_expanded(path)) for path in records}
    state["python_modules"] = {name: importable(name) for name in python_modules}
    state["clock"] = clock()
    return state


def needs_fixing(described: t.Mapping[str, t.Any] | None, kind: str, mode: str, uid: int = 0, gid: int = 0) -> bool:
    """Whether what node_state found at a path is not the kind, mode and owner wanted (missing, a link: yes)."""
    described = described or {}
    return not (described.get("exists") and described.get("kind") == kind
                and described.get("mode") == mode and described.get("uid") == uid and described.get("gid") == gid)


def content_differs(described: t.Mapping[str, t.Any] | None, content: str, mode: str) -> bool:
    """Whether a root-owned file of this content and mode must be written where node_state found `described`."""
    return (needs_fixing(described, "file", mode)
            or (described or {}).get("sha256") != hashlib.sha256(content.encode("utf-8")).hexdigest())


# Module node_state's options (plugins/modules/node_state.py documents them), checked by the module where it runs as a
# module and by its action on the controller where the node's Python runs run() directly (_direct).
ARGUMENT_SPEC = {
    "containers": {"type": "list", "elements": "str", "default": []},
    "images": {"type": "list", "elements": "str", "default": []},
    # str, not path: the results are keyed by the paths as given
    "files": {"type": "list", "elements": "str", "default": []},
    "secret_files": {"type": "list", "elements": "str", "default": [], "no_log": False},
    "records": {"type": "list", "elements": "str", "default": []},
    "python_modules": {"type": "list", "elements": "str", "default": []},
    "pinned_env": {"type": "dict", "default": {}},
    "nft_tables": {"type": "list", "elements": "str", "default": []},
    "engine": {"type": "bool", "default": False},
    "docker_host": {"type": "str", "default": "unix:///var/run/docker.sock"},
    "timeout": {"type": "int", "default": 30},
}


def run(params: t.Mapping[str, t.Any], node: t.Any) -> dict[str, t.Any]:
    """Module node_state's result for its validated params; node: what the read asks of the node (AnsibleModule or
    _direct.Node: run_command, get_bin_path). ModuleError where Docker or nft failed."""
    engine = ask(node.run_command, node.get_bin_path("docker"), params["docker_host"]) if params["engine"] else None
    containers, images, pinned_env = docker_questions(engine, params["containers"], params["images"],
                                                      params["pinned_env"])
    client = None
    if containers or images or pinned_env:
        client = DockerCli(node.run_command, node.get_bin_path("docker", required=True), params["docker_host"],
                           params["timeout"])
    try:
        state = read(client, containers, images, params["files"], params["records"], time.time,
                     params["python_modules"], pinned_env, params["secret_files"])
    except DockerError as error:
        raise ModuleError(f"{error}", engine=engine) from None
    nft = node.get_bin_path("nft") if params["nft_tables"] else None
    try:
        tables = {spec: table_in_force(node.run_command, nft, spec) for spec in params["nft_tables"]}
    except ValueError as error:
        raise ModuleError(f"{error}", engine=engine) from None
    return dict(state, changed=False, engine=engine, nft_tables=tables)
