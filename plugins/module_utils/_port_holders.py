# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Who holds a node's TCP ports before the cluster starts, read in one call (preflight's port check): which of the
cluster's containers run (they hold their own ports), what listens (`ss -Hltn`), and on the head the collection's
own staging server, found between two reads of the ports so that a server starting or ending meanwhile is not taken
for a stranger. Private to the collection."""

from __future__ import annotations

import os
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._direct import ModuleError
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._engine import Run, ask, unanswered_words
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_lock import LockError, holder_seen
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import Untrusted
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import server_lock_file


def running_containers(run: Run, docker: str | None, names: t.Sequence[str]) -> dict[str, t.Any]:
    """{running: names that run, error: docker's complaint}: an absent container, or no Docker at all (a node
    docker_runtime has yet to set up), is a container not running; `error` keeps docker's own words for the callers
    that tell "permission denied" and an engine that does not answer from it."""
    if not names or not docker:
        return {"running": [], "error": ""}
    _rc, out, err = run([docker, "inspect", "--format", "{{.Name}} {{.State.Running}}", *names])
    running = [line.split()[0].lstrip("/") for line in out.splitlines() if line.endswith(" true")]
    return {"running": [name for name in names if name in running], "error": err.strip()}


def listening(run: Run, ss: str, host: str) -> str:
    """`ss -Hltn`'s output: every TCP socket something listens on."""
    rc, out, err = run([ss, "-Hltn"])
    if rc != 0:
        raise OSError(f"{host}: `ss -Hltn` failed: {err.strip()}")
    return out


def read(run: Run, docker: str | None, ss: str, containers: t.Sequence[str], lock: str, host: str,
         euid: int) -> dict[str, t.Any]:
    """The module's result. `lock` empty: no staging server is looked for, and the ports are read once. `engine`:
    whether the Docker engine answers, asked as _common's engine entry point asks it, for the run's later layers
    (one task fewer each run: preflight keeps the answer where the engine answered)."""
    engine = ask(run, docker)
    if engine["answers"] or not docker:
        found = running_containers(run, docker, containers)
    else:
        # it would not answer `docker inspect` either (a hung one: not within a bound); its words stand for the inspect's
        found = {"running": [], "error": unanswered_words(engine)}
    result: dict[str, t.Any] = {"running": found["running"], "docker_error": found["error"], "engine": engine,
                                "staging_server": {"pid": 0, "reason": ""}}
    result["listening"] = result["listening_after"] = listening(run, ss, host)
    if lock:
        pid, reason = holder_seen(lock, host, euid)
        result["staging_server"] = {"pid": pid, "reason": reason}
        result["listening_after"] = listening(run, ss, host)
    return result


# Module port_holders's options (plugins/modules/port_holders.py documents them), checked by the module where it runs as one and by
# its action on the controller where the node's Python runs run() directly (_direct).
ARGUMENT_SPEC = {
    "containers": {"type": "list", "elements": "str", "default": []},
    "staging_cache_dir": {"type": "path", "default": ""},
    "host": {"type": "str", "default": ""},
}


def run(params: t.Mapping[str, t.Any], node: t.Any) -> dict[str, t.Any]:
    """Module port_holders' result for its validated params; node: AnsibleModule or _direct.Node (run_command,
    get_bin_path). ModuleError where the staging server's lock cannot be read safely."""
    host = params["host"] or os.uname().nodename
    lock = server_lock_file(params["staging_cache_dir"]) if params["staging_cache_dir"] else ""
    try:
        result = read(node.run_command, node.get_bin_path("docker"), node.get_bin_path("ss", required=True),
                      params["containers"], lock, host, os.geteuid())
    except (LockError, Untrusted, OSError) as error:
        raise ModuleError(f"{error}") from None
    return dict(result, changed=False)
