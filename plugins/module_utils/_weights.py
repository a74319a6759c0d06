# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Weights staged once (F17): the model's snapshot in the head's hub cache is the truth; every other node gets
the same files, copied from the head over the interconnect, and proven by each file's name, size and sha256.
vLLM then starts with HF_HUB_OFFLINE=1 everywhere, so no rank downloads inside its load window.

The decisions: where a hub id lives in the cache, which files a node lacks or holds wrong, whether it has the
space for them, whether every node holds the head's revision. Pure functions, table-tested; the reading and
copying happen in the modules that call them. Private to the collection."""

from __future__ import annotations

import re
import typing as t

MESSAGES = {
    "F17_SPACE": "[F17] {host}: {needed} to copy into {path}, but its filesystem has {free} free; the copy would "
                 "fill the disk halfway. Fix: free space there (old snapshots under {path}/hub), or point "
                 "vllm_cluster_hf_cache_dir at a larger filesystem.",
    "F17_REVISION": "[F17] {host}: holds revision {found} of {model}, the head {head} holds {expected}; its rank would "
                    "load other weights than rank 0. Fix: run site.yml (the staging step copies the head's revision), "
                    "or remove {host}'s snapshot.",
    "F17_VERIFY": "[F17] {host}: after the copy {count} file(s) of {model} still differ from the head's ({files}); "
                  "a disk or the link corrupts data. Fix: check `dmesg` and the filesystem on {host}, then run "
                  "site.yml again (only the differing files are copied).",
    "F17_NO_SNAPSHOT": "[F17] {host}: no snapshot of {model} (ref {ref}) at {path}: nothing to stage from. Fix: let "
                       "the head download it (model_stage_download=true), point model_stage_source at a copy, or "
                       "point vllm_cluster_hf_cache_dir at an HF_HOME that holds it.",
    "F17_DOWNLOAD_INTERRUPTED": "[F17] {host}: the download of {model} into {path} did not finish ({marker} is still "
                                "there): its snapshot may lack files, so it is not staged. Fix: run site.yml with "
                                "model_stage_download=true and no model_stage_source to finish it (it resumes); if "
                                "the snapshot is whole (you finished it yourself), remove {marker}.",
    "F17_NO_SOURCE": "[F17] {host}: model_stage_source={source} holds no snapshot of {model} (ref {ref}): it should "
                     "be an HF_HOME, its hub folder or the folder models--ORG--NAME. Fix: point it at one that does.",
    "F17_NOT_A_HUB_ID": "vllm_server_model={model!r} is not a hub id (ORG/NAME): only a hub id is staged. Fix: name "
                        "the model by its hub id, or set vllm_cluster_stage_weights=false and mount the path yourself.",
    "REVISION_NOT_SERVED": (
        "model_stage_ref={ref} but vllm_cluster_model_revision={revision}: vLLM is started with --revision {revision}, "
        "so it would serve another revision than the one staged and verified. Nothing was staged. Fix: set "
        "vllm_cluster_model_revision={ref} and leave model_stage_ref unset."
    ),
    "SOURCE_NOT_AN_ARCHIVE": (
        "model_stage_source={source} is on the controller (model_stage_source_remote=false) but is not an archive "
        "(.tar, .tar.gz, .tgz) of the models--ORG--NAME folder. Fix: archive it (tar -C ~/.cache/huggingface/hub -czf "
        "model.tgz {folder}), or copy it to the head and set model_stage_source_remote=true."
    ),
    "NOT_STAGED_OFF": "Weights are not staged: vllm_cluster_stage_weights is false.",
    "NOT_STAGED_NOT_A_HUB_ID": (
        "Weights are not staged: vllm_server_model={model} is not a hub id (ORG/NAME): each node must hold that path "
        "itself."
    ),
    "HEAD_HOLDS": "{head} holds {model} {ref} = {commit}: {files} files, {size} ({hashed} hashed this run).",
}

# huggingface_hub's own rule for repo ids (utils/_validators.py): letters, digits, -_. and one '/'.
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def is_hub_id(model: str) -> bool:
    """A model named by its hub id (ORG/NAME), not a path inside the container."""
    text = str(model or "")
    return bool(_HUB_ID.match(text)) and ".." not in text and not text.endswith((".", "-"))


def repo_folder(model: str) -> str:
    """The hub cache's folder of a model: models--ORG--NAME (huggingface_hub's repo_folder_name)."""
    return "models--" + str(model).replace("/", "--")


def _size(entry: t.Mapping[str, t.Any]) -> int:
    return int(entry.get("size") or 0)


def transfer_plan(source: t.Mapping[str, t.Mapping[str, t.Any]],
                  target: t.Mapping[str, t.Mapping[str, t.Any]]) -> dict[str, t.Any]:
    """What one node must receive: every file of the head's manifest (relative path -> {size, sha256}) it lacks
    or holds with another size or hash. `extra` lists files the head does not have (left alone: a node may hold
    other revisions' files only under other snapshot folders, so an extra file here is reported, not removed)."""
    copy = sorted(path for path, entry in source.items()
                  if path not in target or _size(target[path]) != _size(entry)
                  or str(target[path].get("sha256")) != str(entry.get("sha256")))
    return {
        "to_copy": copy,
        "bytes": sum(_size(source[path]) for path in copy),
        "total": sum(_size(entry) for entry in source.values()),
        "same": len(source) - len(copy),
        "extra": sorted(set(target) - set(source)),
    }


def moves(fetches: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """What the workers' plans (model_fetch's `fetch` answer by worker; None where a worker made none) ask of the run:
    `copiers`, the workers that lack files (the head's server runs while they copy, and ends once each said it is
    done); `copying`, whether there is any; `changing`, whether any worker needs a change at all (files, or its ref
    moved to the head's revision)."""
    plans = {host: fetch or {} for host, fetch in (fetches or {}).items()}
    copiers = [host for host, fetch in plans.items() if fetch.get("to_copy")]
    return {"copiers": copiers, "copying": bool(copiers), "changing": any(fetch.get("needed") for fetch in plans.values())}


def human(count: t.Any) -> str:
    """Bytes as people read them (decimal units, as `df -H` and the hub's pages show sizes)."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def space_problem(host: str, needed: t.Any, free: t.Any, path: str) -> str:
    """F17: a node without room for the files it must receive; '' when they fit."""
    if int(needed) <= int(free):
        return ""
    return MESSAGES["F17_SPACE"].format(host=host, needed=human(needed), free=human(free), path=path)


def revision_problems(model: str, head: str, expected: str, found: t.Mapping[str, str]) -> list[str]:
    """F17: every node's ref (refs/main of the model's cache folder) must name the head's revision."""
    return [MESSAGES["F17_REVISION"].format(host=host, found=revision or "none", model=model, head=head,
                                            expected=expected)
            for host, revision in sorted(found.items()) if host != head and revision != expected]


def verify_problem(host: str, model: str, differing: t.Sequence[str]) -> str:
    """F17: files that still differ after a copy (shown up to five)."""
    if not differing:
        return ""
    shown = ", ".join(list(differing)[:5]) + (", ..." if len(differing) > 5 else "")
    return MESSAGES["F17_VERIFY"].format(host=host, count=len(differing), model=model, files=shown)


def report(fetch: t.Mapping[str, t.Any], host: str, snapshot: t.Mapping[str, t.Any], url: str = "") -> str:
    """One line on a worker's staging: before the copy (its plan) or, given the server's url, after it."""
    model, commit = snapshot.get("model", ""), str(snapshot.get("commit", ""))
    count = len(snapshot.get("files") or {})
    if url:
        seconds = float(fetch.get("seconds") or 0)
        rate = f", {human(int(fetch.get('transferred', 0) / seconds))}/s" if seconds > 0 else ""
        return (f"{host}: copied {len(fetch.get('copied') or [])} of {count} files of {model} {commit[:12]} "
                f"({human(fetch.get('transferred', 0))} in {seconds:.1f} s{rate}) from {url}, each verified by "
                f"sha256; {fetch.get('same', 0)} already matched")
    found = str(fetch.get("found") or "")
    held = "" if found == commit else f"; its ref names {found[:12] or 'no revision'}, staging points it at {commit[:12]}"
    if not fetch.get("to_copy"):
        return f"{host}: holds all {count} files of {model} {commit[:12]} ({human(fetch.get('total', 0))}): nothing to copy{held}"
    return (f"{host}: lacks {len(fetch['to_copy'])} of {count} files of {model} {commit[:12]} "
            f"({human(fetch.get('bytes', 0))} to copy, {human(fetch.get('free', 0))} free){held}")


def final_problems(fetch: t.Mapping[str, t.Any], host: str, snapshot: t.Mapping[str, t.Any], head: str) -> list[str]:
    """F17 after staging, from a worker's last plan: files still differing from the head's manifest, and a ref
    naming another revision than the head's (that node's rank would load other weights than rank 0)."""
    model, commit = str(snapshot.get("model", "")), str(snapshot.get("commit", ""))
    problems = revision_problems(model, head, commit, {host: str(fetch.get("found") or "")})
    differing = verify_problem(host, model, list(fetch.get("to_copy") or []))
    return problems + ([differing] if differing else [])
