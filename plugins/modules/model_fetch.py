#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: model_fetch
short_description: A node's copy of the head's model snapshot, over the interconnect, verified (F17)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Compares this node's snapshot of O(model) at O(commit) with the head's manifest O(files) (name, size, sha256;
    hashes kept by size and modification time, so an unchanged node reads metadata only) and plans the files it
    lacks or holds wrong.
  - Refuses before copying anything when the cache's filesystem has less free space than those files need.
  - Copies them from O(url) (the head's M(inferops.vllm_cluster.model_serve) on its interconnect address), each
    into C(<name>.part), resumed with a byte range after an interruption, hashed while it arrives and checked against
    the head's sha256 before it replaces the file. Every request is signed with O(secret) and every answer must
    prove the server holds it too; one copy per model and node at a time (an interrupted run's copy still running is
    ended first); progress goes to C(<cache_dir>/inferops-weights/models--ORG--NAME.progress.json). Then checks the
    whole snapshot again and points C(refs/<ref>) at O(commit), so vLLM finds it with C(HF_HUB_OFFLINE=1).
  - With O(plan_only) (and in check mode) it only plans and checks the space.
options:
  cache_dir:
    description: The node's HF_HOME on the host (C(vllm_cluster_hf_cache_dir)).
    type: path
    required: true
  model:
    description: The model's hub id (ORG/NAME).
    type: str
    required: true
  ref:
    description: The ref the head resolved (C(refs/<ref>) is pointed at O(commit)).
    type: str
    default: main
  commit:
    description: The head's commit of the model.
    type: str
    required: true
  files:
    description: The head's manifest, relative path to C(size) and C(sha256) (M(inferops.vllm_cluster.model_snapshot)).
    type: dict
    required: true
  url:
    description: The head's staging server; required unless O(plan_only).
    type: str
    default: ""
  secret:
    description: This run's secret, shared with the head's M(inferops.vllm_cluster.model_serve); required unless O(plan_only).
    type: str
    default: ""
  streams:
    description: How many files are copied at once (the largest first); one stream is bounded by one core receiving, hashing and writing.
    type: int
    default: 4
  timeout:
    description: Seconds a request may stall before the copy fails (a re-run resumes it).
    type: int
    default: 60
  plan_only:
    description: Plan and check the space; copy nothing.
    type: bool
    default: false
extends_documentation_fragment:
  - inferops.vllm_cluster.weights
  - inferops.vllm_cluster.weights.verify
attributes:
  check_mode:
    support: full
    description: Plans only.
  diff_mode:
    support: none
    description: The plan is returned instead.
"""

EXAMPLES = r"""
- name: Copy what this node lacks from the head
  inferops.vllm_cluster.model_fetch:
    cache_dir: /var/lib/inferops-vllm-cluster/huggingface
    model: Qwen/Qwen3-0.6B
    commit: "{{ head_snapshot.commit }}"
    files: "{{ head_snapshot.files }}"
    url: http://192.168.200.12:29510
    secret: "{{ staging_secret }}"
  no_log: true
"""

RETURN = r"""
fetch:
  description: >-
    The plan (C(to_copy), C(bytes), C(total), C(same), C(extra)), the node's commit before (C(found)), whether it
    needs anything (C(needed): files, or its ref moved to O(commit)), its free space (C(free)), the space problem
    (C(problem), empty when it fits), where the copy reports its progress (C(progress_file)) and, after a copy,
    what moved (C(copied), C(transferred), C(seconds)) and the pid of an interrupted run's copy it ended (C(ended), 0
    when none).
  returned: always
  type: dict
  sample: {"found": "", "needed": true, "free": 52000000000, "problem": "",
           "progress_file": "/var/lib/hf/inferops-weights/models--Org--M.progress.json", "to_copy": ["model.safetensors"], "bytes": 1503300328,
           "total": 1503300328, "same": 0, "extra": [], "copied": ["model.safetensors"], "transferred": 1503300328,
           "seconds": 14.2}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import (
    space_problem,
    transfer_plan,
    verify_problem,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_fetch import FetchError, fetch_files, say_done
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_lock import LockError, take
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import (
    MESSAGES,
    Untrusted,
    check_tree,
    is_commit,
    open_entry,
    ref_name_problem,
    relative_problem,
    snapshot_files,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_manifest import read_manifest, remember
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import (
    copy_lock_file,
    hash_cache_file,
    progress_file,
    read_ref,
    repo_dir,
    snapshot_path,
    write_ref,
)


def free_bytes(path: str) -> int:
    """Free space for an unprivileged writer on the filesystem that holds path (its nearest existing folder)."""
    while not os.path.exists(path):
        path = os.path.dirname(path)
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "cache_dir": {"type": "path", "required": True},
            "model": {"type": "str", "required": True},
            "ref": {"type": "str", "default": "main"},
            "commit": {"type": "str", "required": True},
            "files": {"type": "dict", "required": True},
            "url": {"type": "str", "default": ""},
            "secret": {"type": "str", "default": "", "no_log": True},
            "streams": {"type": "int", "default": 4},
            "timeout": {"type": "int", "default": 60},
            "plan_only": {"type": "bool", "default": False},
            "verify": {"type": "str", "choices": ["fast", "full"], "default": "fast"},
            "host": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
        required_if=[("plan_only", False, ("url", "secret"))],
    )
    p = module.params
    host = p["host"] or os.uname().nodename
    told = []  # fetch_files tells the server this worker is done; every other way out of a copy is told here
    try:
        # The head's commit and file names become paths written as root here: checked before any is used.
        problems = [ref_name_problem(host, p["ref"])] + [relative_problem(host, name) for name in sorted(p["files"])]
        if not is_commit(p["commit"]):
            problems.append(MESSAGES["F17_REF_CONTENT"].format(host=host, path="the head's ref", content=p["commit"]))
        if any(problems):
            module.fail_json(msg="; ".join(problem for problem in problems if problem))
        fetch(module, p, host, told)
    except Untrusted as exc:
        module.fail_json(msg=str(exc))
    finally:
        # whatever became of this copy (nothing left to copy, a refusal, a failure), the server need not wait for it
        if not (p["plan_only"] or module.check_mode or told):
            say_done(p["url"], p["secret"], host)


def fetch(module: AnsibleModule, p: dict, host: str, told: list) -> None:
    """Plans, copies what differs, verifies and points the ref; exits the module."""
    repo = repo_dir(p["cache_dir"], p["model"])
    snapshot = snapshot_path(p["cache_dir"], p["model"], p["commit"])
    hashes = hash_cache_file(p["cache_dir"], p["model"], p["commit"])
    check_tree(p["cache_dir"], os.path.relpath(snapshot, p["cache_dir"]), host)
    # The hashes a node keeps are the collection's own sidecar (not the model): a plan keeps them too, so the
    # copy after it, and every later run, reads metadata only. Check mode writes nothing.
    names = snapshot_files(repo, p["commit"], host) if os.path.isdir(snapshot) else []

    def opener(relative: str) -> int:  # every size, time and hash through a descriptor, never a path again
        return open_entry(repo, p["commit"], relative, host)

    have = read_manifest(snapshot, hashes, keep=not module.check_mode, names=names, opener=opener,
                         full=p["verify"] == "full")["files"]
    plan = transfer_plan(p["files"], have)
    free = free_bytes(p["cache_dir"])
    found = read_ref(repo, p["ref"], host, root=p["cache_dir"])
    result = {**plan, "found": found, "free": free, "needed": bool(plan["to_copy"]) or found != p["commit"],
              "problem": space_problem(host, plan["bytes"], free, p["cache_dir"]),
              "progress_file": progress_file(p["cache_dir"], p["model"]),
              "copied": [], "transferred": 0, "seconds": 0, "ended": 0}
    if module.check_mode or p["plan_only"]:
        module.exit_json(changed=result["needed"], fetch=result)
    if result["problem"]:
        module.fail_json(msg=result["problem"], fetch=result)
    if plan["to_copy"]:
        wanted = {path: p["files"][path] for path in plan["to_copy"]}
        # one writer per .part: an interrupted run's copy still running detached is ended first
        try:
            lock, result["ended"] = take(copy_lock_file(p["cache_dir"], p["model"]), host, "copy of the weights",
                                         "AnsiballZ_model_fetch")
        except LockError as exc:
            module.fail_json(msg=str(exc), fetch=result)
        told.append(True)
        try:
            done = fetch_files(p["url"], wanted, snapshot, p["timeout"], result["progress_file"], root=p["cache_dir"],
                               secret=p["secret"], worker=host, streams=p["streams"])
        except FetchError as exc:
            module.fail_json(msg=f"{host}: copying {p['model']} from {p['url']} failed: {exc}", fetch=result)
        finally:
            os.close(lock)
        remember(snapshot, hashes, {path: str(entry["sha256"]) for path, entry in wanted.items()}, opener)
        result.update(copied=done["copied"], transferred=done["bytes"], seconds=done["seconds"])
    after = read_manifest(snapshot, hashes, names=snapshot_files(repo, p["commit"], host), opener=opener)["files"]
    differing = transfer_plan(p["files"], after)["to_copy"]
    if differing:
        module.fail_json(msg=verify_problem(host, p["model"], differing), fetch=result)
    moved = write_ref(repo, p["ref"], p["commit"], host, root=p["cache_dir"])
    module.exit_json(changed=bool(result["copied"]) or moved, fetch=result)


if __name__ == "__main__":
    main()
