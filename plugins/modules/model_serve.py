#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: model_serve
short_description: The head's staging server for a model snapshot, on its interconnect address (F17)
version_added: 0.6.0
author: inferops engineering (@inferops)
description:
  - With O(state=serving) (run it with C(async)), serves the files of O(files) from the head's snapshot of O(model)
    at O(commit) over HTTP on O(address) and O(port) only, with byte ranges, until every one of O(workers) has said
    it is done, or no request came for O(idle) seconds (O(startup) before the first).
  - Answers only requests signed with this run's O(secret) (HMAC with a fresh nonce, the secret itself never sent)
    and signs its answers, so M(inferops.vllm_cluster.model_fetch) knows it talks to this run's server and a process
    that took the port first is refused. Serves nothing but the manifest's regular files, each reached without
    following a link except a snapshot entry's own link into its model's C(blobs/).
  - Sends each file with sendfile and drops its pages from the page cache afterwards.
  - Holds a lock in C(<cache_dir>/inferops-weights/server.lock) while it serves and writes there where it listens
    (C(listening RUN ADDRESS:PORT)) or why it could not (C(failed RUN REASON)). A server an interrupted run left behind is
    ended first (the kernel names the process holding the lock).
  - With O(state=stopped), only ends such a leftover server; in check mode, only names it (C(served.ended)).
    Preflight's port check finds it through the same lock (module C(port_holders)).
options:
  cache_dir:
    description: The head's HF_HOME on the host (C(vllm_cluster_hf_cache_dir)).
    type: path
    required: true
  state:
    description: C(serving) serves until done; C(stopped) ends a leftover server.
    type: str
    choices: [serving, stopped]
    default: serving
  model:
    description: The model's hub id (ORG/NAME). Required when serving.
    type: str
    default: ""
  commit:
    description: The head's commit of the model. Required when serving.
    type: str
    default: ""
  files:
    description: The manifest (relative path to C(size)) of M(inferops.vllm_cluster.model_snapshot); nothing else is served.
    type: dict
    default: {}
  address:
    description: The head's interconnect address, the only one listened on. Required when serving.
    type: str
    default: ""
  port:
    description: The TCP port (C(vllm_cluster_weights_port)).
    type: int
    default: 29510
  secret:
    description: This run's secret, shared with the workers' M(inferops.vllm_cluster.model_fetch). Required when serving.
    type: str
    default: ""
  run:
    description: This run's id (not secret), written with the state line in the lock file, so the play's wait does not read an older run's line.
    type: str
    default: ""
  workers:
    description: How many workers copy; the server exits once that many have said they are done.
    type: int
    default: 0
  idle:
    description: Seconds with no request in flight after which it exits anyway (a worker that died).
    type: int
    default: 60
  startup:
    description: Seconds it waits for the first request.
    type: int
    default: 120
  timeout:
    description: Seconds a connection may stall (an idle or slow client is dropped after this).
    type: int
    default: 60
extends_documentation_fragment:
  - inferops.vllm_cluster.weights
attributes:
  check_mode:
    support: full
    description: Serves nothing; C(stopped) reports a leftover server without ending it.
  diff_mode:
    support: none
    description: Nothing to diff.
"""

EXAMPLES = r"""
- name: Serve the head's snapshot while the workers copy
  inferops.vllm_cluster.model_serve:
    cache_dir: /var/lib/inferops-vllm-cluster/huggingface
    model: Qwen/Qwen3-0.6B
    commit: "{{ head.snapshot.commit }}"
    files: "{{ head.snapshot.files }}"
    address: 192.168.200.12
    port: 29510
    secret: "{{ staging_secret }}"
    workers: 1
  async: 14400
  poll: 0
  no_log: true

- name: End a staging server an interrupted run left behind
  inferops.vllm_cluster.model_serve:
    cache_dir: /var/lib/inferops-vllm-cluster/huggingface
    state: stopped
"""

RETURN = r"""
served:
  description: >-
    Why it stopped (C(reason)), requests answered and refused, bytes sent, the workers that said they were done
    (C(done)), seconds served; C(ended) is the pid of a leftover server it ended (0 when none).
  returned: always
  type: dict
  sample: {"reason": "every worker is done", "requests": 14, "refused": 0, "bytes": 1503300328, "done": ["spark-2"],
           "seconds": 12.4, "ended": 0}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_lock import LockError, holder_seen, say, take
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import Untrusted, is_commit
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_server import MESSAGES, Staging, serve
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import repo_dir, server_lock_file


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "cache_dir": {"type": "path", "required": True},
            "state": {"type": "str", "choices": ["serving", "stopped"], "default": "serving"},
            "model": {"type": "str", "default": ""},
            "commit": {"type": "str", "default": ""},
            "files": {"type": "dict", "default": {}},
            "address": {"type": "str", "default": ""},
            "port": {"type": "int", "default": 29510},
            "secret": {"type": "str", "default": "", "no_log": True},
            "run": {"type": "str", "default": ""},
            "workers": {"type": "int", "default": 0},
            "idle": {"type": "int", "default": 60},
            "startup": {"type": "int", "default": 120},
            "timeout": {"type": "int", "default": 60},
            "host": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
        required_if=[("state", "serving", ("model", "commit", "address", "secret"))],
    )
    p = module.params
    host = p["host"] or os.uname().nodename
    lock = server_lock_file(p["cache_dir"])
    served = {"reason": "", "requests": 0, "refused": 0, "bytes": 0, "done": [], "seconds": 0, "ended": 0}
    if p["state"] == "serving" and not is_commit(p["commit"]):
        module.fail_json(msg=f"{host}: commit={p['commit']!r} is not a commit (40 hex digits).", served=served)
    if p["state"] == "serving" and not 1 <= p["port"] <= 65535:
        module.fail_json(msg=f"{host}: vllm_cluster_weights_port={p['port']} is not a TCP port (1-65535).", served=served)
    try:
        leftover, served["reason"] = holder_seen(lock, host)
    except (LockError, Untrusted) as exc:
        module.fail_json(msg=str(exc), served=served)
    if served["reason"]:
        module.exit_json(changed=False, served=served)
    if module.check_mode or (p["state"] == "stopped" and not leftover):
        served["ended"] = leftover
        module.exit_json(changed=leftover != 0, served=served)
    try:
        fd, served["ended"] = take(lock, host, "staging server", "AnsiballZ_model_serve")
    except (LockError, Untrusted) as exc:
        module.fail_json(msg=str(exc), served=served)
    if p["state"] == "stopped":
        os.close(fd)
        module.exit_json(changed=served["ended"] != 0, served=served)
    say(fd, f"starting {p['run']}\n")
    staging = Staging(repo_dir(p["cache_dir"], p["model"]), p["commit"], p["files"], p["secret"], p["workers"], host)
    try:
        served.update(serve(p["address"], p["port"], staging, p["idle"], p["startup"], p["timeout"],
                            on_listening=lambda: say(fd, f"listening {p['run']} {p['address']}:{p['port']}\n")))
    except OSError as exc:
        message = MESSAGES["CANNOT_LISTEN"].format(host=host, address=p["address"], port=p["port"], error=exc.strerror or exc)
        say(fd, f"failed {p['run']} {message}\n")
        module.fail_json(msg=message, served=served)
    finally:
        os.close(fd)
    module.exit_json(changed=False, served=served)


if __name__ == "__main__":
    main()
