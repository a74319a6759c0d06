#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: model_snapshot
short_description: The head's copy of a model in its hub cache, and its manifest (F17)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Resolves which commit O(ref) names in the hub cache under O(cache_dir) (C(hub/models--ORG--NAME/refs/<ref>)), and
    returns every file of that snapshot with its size and sha256 (the manifest every other node's copy is checked
    against).
  - Hashes are kept in C(<cache_dir>/inferops-weights/) keyed by each file's size and modification time, so a run
    that finds nothing changed reads metadata only.
  - With O(source), first brings the operator's own copy (an HF_HOME, its C(hub) folder or the model's folder, on
    this node) into the cache; files missing or of another size are copied as regular files.
  - Nothing read from a cache is trusted as a path, since the cache is mounted into the cluster's containers and a
    source is often a user's. A ref must hold a commit (40 hex digits) and is read without following a link; every
    entry of a snapshot must be a file or a link into the same model's C(blobs/); a source owned by anyone but root
    and O(trusted_owners) is refused; every file written under the cache is opened without following a link. Each
    refusal is an F17 message naming the host, the path and what was found.
  - A snapshot whose download by the model_stage role did not finish (its marker in C(inferops-weights/)) is not
    staged, since huggingface_hub writes the ref before the files; with O(required) that is an F17 refusal.
  - The model_stage role runs it on the head; M(inferops.vllm_cluster.model_fetch) copies to the other nodes.
options:
  cache_dir:
    description: The node's HF_HOME on the host (C(vllm_cluster_hf_cache_dir)); the hub cache is its C(hub) folder.
    type: path
    required: true
  model:
    description: The model's hub id (ORG/NAME).
    type: str
    required: true
  ref:
    description: The branch or tag whose commit is staged (C(refs/<ref>)), or a commit itself.
    type: str
    default: main
  source:
    description: The operator's copy on this node to bring into the cache first; empty = none.
    type: path
    default: ""
  trusted_owners:
    description: Users besides root whose O(source) tree is staged (the owner of the model's folder is checked).
    type: list
    elements: str
    default: []
  required:
    description: Fail with the F17 message when no snapshot is found; false answers C(commit) empty instead.
    type: bool
    default: true
extends_documentation_fragment:
  - inferops.vllm_cluster.weights
  - inferops.vllm_cluster.weights.verify
attributes:
  check_mode:
    support: full
    description: In check mode nothing is imported and no hash is kept.
  diff_mode:
    support: none
    description: Nothing to diff.
"""

EXAMPLES = r"""
- name: Read the head's snapshot of the model
  inferops.vllm_cluster.model_snapshot:
    cache_dir: /var/lib/inferops-vllm-cluster/huggingface
    model: Qwen/Qwen3-0.6B
  register: snapshot
"""

RETURN = r"""
snapshot:
  description: >-
    The snapshot found; C(files) maps each relative path to its C(size) and C(sha256). C(interrupted) is true (and
    C(commit) empty) while the head's own download of the model has not finished
    (C(<cache_dir>/inferops-weights/models--ORG--NAME.downloading) is there).
  returned: always
  type: dict
  sample: {"model": "Qwen/Qwen3-0.6B", "ref": "main", "commit": "c1899de289a04d12100db370d81485cdf75e47ca",
           "path": "/var/lib/inferops-vllm-cluster/huggingface/hub/models--Qwen--Qwen3-0.6B/snapshots/c18...",
           "files": {"config.json": {"size": 726, "sha256": "..."}}, "size": 1503300328, "hashed": 0, "imported": []}
"""

import os
import pwd

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import MESSAGES, is_hub_id
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_manifest import read_manifest
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import (
    Untrusted,
    check_tree,
    open_entry,
    owner_problem,
    ref_name_problem,
    snapshot_files,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_snapshot import (
    clear_download_marker,
    download_marker,
    find_repo,
    hash_cache_file,
    import_snapshot,
    read_ref,
    repo_dir,
    snapshot_path,
    write_ref,
)


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "cache_dir": {"type": "path", "required": True},
            "model": {"type": "str", "required": True},
            "ref": {"type": "str", "default": "main"},
            "source": {"type": "path", "default": ""},
            "trusted_owners": {"type": "list", "elements": "str", "default": []},
            "required": {"type": "bool", "default": True},
            "verify": {"type": "str", "choices": ["fast", "full"], "default": "fast"},
            "host": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    p = module.params
    host = p["host"] or os.uname().nodename
    if not is_hub_id(p["model"]):
        module.fail_json(msg=MESSAGES["F17_NOT_A_HUB_ID"].format(model=p["model"]))
    problem = ref_name_problem(host, p["ref"])
    if problem:
        module.fail_json(msg=problem)
    try:
        module.exit_json(**snapshot(module, p, host))
    except Untrusted as exc:
        module.fail_json(msg=str(exc))


def snapshot(module: AnsibleModule, p: dict, host: str) -> dict:
    """The module's result: the source brought in (when given), then the head's snapshot and its manifest."""
    repo = repo_dir(p["cache_dir"], p["model"])
    # from the cache root down to the model's folder, no link (what is below it is checked where it is read)
    check_tree(p["cache_dir"], os.path.relpath(repo, p["cache_dir"]), host)
    imported: list[str] = []
    if p["source"]:
        source_repo = find_repo(p["source"], p["model"])
        problem = owner_problem(host, source_repo, p["trusted_owners"], user_name) if source_repo else ""
        if problem:
            module.fail_json(msg=problem)
        source_commit = read_ref(source_repo, p["ref"], host) if source_repo else ""
        if not source_commit:
            module.fail_json(msg=MESSAGES["F17_NO_SOURCE"].format(host=host, source=p["source"], model=p["model"],
                                                                  ref=p["ref"]))
        if not module.check_mode:
            imported = import_snapshot(source_repo, source_commit,
                                       snapshot_path(p["cache_dir"], p["model"], source_commit), host, root=p["cache_dir"])
            write_ref(repo, p["ref"], source_commit, host, root=p["cache_dir"])
            # the operator's copy is whole: an earlier download's leftover marker no longer stands for this model
            clear_download_marker(p["cache_dir"], p["model"], host)
    commit = read_ref(repo, p["ref"], host, root=p["cache_dir"])
    marker = download_marker(p["cache_dir"], p["model"])
    interrupted = os.path.lexists(marker)
    if interrupted and p["required"] and not module.check_mode:
        module.fail_json(msg=MESSAGES["F17_DOWNLOAD_INTERRUPTED"].format(host=host, model=p["model"], path=repo,
                                                                         marker=marker))
    if interrupted or not commit:
        if p["required"] and not module.check_mode:
            module.fail_json(msg=MESSAGES["F17_NO_SNAPSHOT"].format(host=host, model=p["model"], ref=p["ref"],
                                                                    path=repo))
        empty = {"model": p["model"], "ref": p["ref"], "commit": "", "path": "", "files": {}, "size": 0, "hashed": 0,
                 "imported": imported, "interrupted": interrupted}
        return {"changed": bool(imported), "snapshot": empty}
    path = snapshot_path(p["cache_dir"], p["model"], commit)
    manifest = read_manifest(path, hash_cache_file(p["cache_dir"], p["model"], commit), keep=not module.check_mode,
                             names=snapshot_files(repo, commit, host),
                             opener=lambda relative: open_entry(repo, commit, relative, host),
                             full=p["verify"] == "full")
    if not manifest["files"]:
        module.fail_json(msg=MESSAGES["F17_NO_SNAPSHOT"].format(host=host, model=p["model"], ref=p["ref"], path=path))
    return {"changed": bool(imported), "snapshot": {
        "model": p["model"], "ref": p["ref"], "commit": commit, "path": path, "files": manifest["files"],
        "size": sum(entry["size"] for entry in manifest["files"].values()), "hashed": manifest["hashed"],
        "imported": imported, "interrupted": False}}


if __name__ == "__main__":
    main()
