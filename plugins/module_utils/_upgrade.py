# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What runs, and the way from one version to the next (F29, F30).

After every site.yml that deployed the whole cluster the collection keeps, on the controller, the cluster's last
known good version: the runtime image (its name and the image ID every node holds, vLLM's and Ray's versions read
from it), the model and its revision, and the serving settings, with a hash of them. A later run whose image name is
the record's but whose nodes hold another image under it (a re-pushed tag) is stopped before anything changes (F29).

playbooks/upgrade.yml moves the cluster from that record to the inventory's values: `plan` says what changes, the
new version is deployed by site.yml itself (a run of its own, with the new values as extra variables), accepted by
fixed prompts and the benchmark against the baseline, or the record's values deployed again the same way and the
play failed with both versions' figures (F30). Private to the collection."""

from __future__ import annotations

import hashlib
import json
import re
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _secrets
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING

RECORD_VERSION = 1
# What a version is: the variables an upgrade changes and a rollback restores, each cluster-wide (the head's value,
# every node's the same). Secrets are not among them (an upgrade keeps the inventory's), nor is the operator's extra
# environment (vllm_cluster_extra_env may carry secret values, which a record on disk must not).
VERSION_VARIABLES = (
    "vllm_cluster_image",
    "vllm_cluster_image_archive",
    "vllm_cluster_vllm_min_version",
    "vllm_server_model",
    "vllm_cluster_model_revision",
    "vllm_server_served_model_name",
    "vllm_server_tensor_parallel_size",
    "vllm_server_pipeline_parallel_size",
    "vllm_server_max_model_len",
    "vllm_server_gpu_memory_utilization",
    "vllm_server_dtype",
    "vllm_server_enforce_eager",
    "vllm_server_extra_args",
    "vllm_server_env",
)

MESSAGES = {
    "REPOINTED": "[F29] {host}: {image} now names image {found}, not the {recorded} the cluster last ran and passed "
                 "with (recorded {date}): the tag was pushed again, or the node pulled or loaded another image under "
                 "it. Nothing was changed. Fix: pin the image by digest (name@sha256:...) in the inventory; to move to "
                 "the new image, run playbooks/upgrade.yml (an acceptance test and a way back); to run it as it is, "
                 "-e vllm_cluster_accept_repointed_image=true. See {doc}#f29",
    "NO_RECORD": "[F30] no record of what the cluster runs ({path}): upgrade.yml moves a cluster from its last known "
                 "good version, which site.yml records after a run that deployed the whole cluster. Fix: run site.yml "
                 "once with the current version, then upgrade. See {doc}#f30",
    "NODES_DIFFER": "[F30] {name} differs between the nodes ({values}): an upgrade moves the whole cluster to one "
                    "version. Fix: set it once for every node (group_vars/all). See {doc}#f30",
    "SECRET": "[F30] {name} holds a secret ({keys}): a version is kept on disk on the controller, secrets are not. "
              "Fix: pass the secret through vllm_cluster_extra_env and vllm_cluster_secret_env_names, the API key as "
              "vllm_server_api_key. See {doc}#f30",
    "DISK": "[F30] {host}: {free} GiB free under Docker's data root {root}, the new image needs {need} GiB beside the "
            "one kept for the way back: nothing was changed. Fix: free space (`docker image prune` removes images no "
            "container uses), or set vllm_cluster_upgrade_image_gib if the image is smaller. See {doc}#f30",
    "ANSWER": "[F30] {host}: the fixed prompt {prompt} got {what}: the new version serves, but not a well-formed "
              "answer. See {doc}#f30",
    "PROMPT": "[F30] the upgrade's site.yml runs cannot answer a prompt ({options}): give the secret as a file "
              "(--vault-password-file, an SSH agent, become without a password). Nothing was changed. See {doc}#f30",
    "LIMIT": "[F30] upgrade.yml moves the whole cluster: --limit {limit} would upgrade some nodes and record them as "
             "the cluster's version. Nothing was changed. Fix: run it without --limit. See {doc}#f30",
    "TEMPLATE": "[F30] {name} holds template text ({text}): an upgrade writes the version to files that Ansible "
                "renders again, so it would be rendered twice. Fix: keep template text out of the version's "
                "variables (put it in a file the container reads, e.g. --chat-template PATH). See {doc}#f30",
    "LOCKED": "[F30] another upgrade of this cluster runs, or one was interrupted ({path} exists since {since}): "
              "nothing was changed. Fix: wait for it (its logs are beside the lock); if none runs, remove {path}. "
              "See {doc}#f30",
    "NO_BASELINE": "[F30] {host}: the running version gives no benchmark to judge the new one against: {problems} "
                   "Nothing was changed. Fix: run playbooks/bench.yml and site.yml --tags validate until the running "
                   "version serves the benchmark, then upgrade. See {doc}#f30",
    "TRIAL": "[F30] the upgrade's site.yml run left no record of the version planned in {path} (found {found}): what "
             "it deployed is not what was planned. See {doc}#f30",
    "DEPLOY_FAILED": "[F30] the upgrade to {to} failed while deploying it ({where}) and was rolled back to {back}: "
                     "{restored}. What failed: {why} Logs: {log}. See {doc}#f30",
    "NOT_ACCEPTED": "[F30] the upgrade to {to} deployed but was not accepted ({where}) and was rolled back to {back}: "
                    "{restored}. What failed: {why} Logs: {log}. See {doc}#f30",
    "ROLLBACK_FAILED": "[F30] the upgrade to {to} failed ({why}) and the way back to {back} failed too ({back_why}): "
                       "the cluster may be down. Logs: {log}. Fix: read both logs, then run site.yml with the previous "
                       "values in the inventory. See {doc}#f30",
    "NOT_RECORDED": "not recorded as the last known good version: {problem}",
}


class UpgradeError(ValueError):
    """The inputs of a plan or a record cannot be used."""


def version_values(values_by_host: t.Mapping[str, t.Mapping[str, t.Any]], head: str) -> dict[str, t.Any]:
    """The cluster's version: the head's value of each version variable; UpgradeError when a node holds another one
    (an upgrade moves the whole cluster) or a value carries a secret."""
    if head not in values_by_host:
        raise UpgradeError(f"no values for the head {head}")
    version = {name: normal(values_by_host[head].get(name)) for name in VERSION_VARIABLES}
    for name in VERSION_VARIABLES:
        differing = {host: normal(values.get(name)) for host, values in values_by_host.items()
                     if normal(values.get(name)) != version[name]}
        if differing:
            shown = "; ".join(f"{host}: {json.dumps(value)}" for host, value in
                              sorted({head: version[name], **differing}.items()))
            raise UpgradeError(MESSAGES["NODES_DIFFER"].format(name=name, values=shown, doc=TROUBLESHOOTING))
    env = version.get("vllm_server_env") or {}
    secret_keys = sorted(str(key) for key, value in env.items()
                         if _secrets.secret_name(str(key)) or _secrets.mask_text(str(value)) != str(value))
    if secret_keys:
        raise UpgradeError(MESSAGES["SECRET"].format(name="vllm_server_env", keys=", ".join(secret_keys),
                                                     doc=TROUBLESHOOTING))
    args = [str(arg) for arg in version.get("vllm_server_extra_args") or []]
    if _secrets.mask_argv(args) != args:
        # name the flag, never the value: --api-key=X by its name, --api-key X by the argument before the value
        flags = [arg.split("=", 1)[0] if arg.startswith("-") and "=" in arg else (args[index - 1] if index else "a value")
                 for index, (arg, masked) in enumerate(zip(args, _secrets.mask_argv(args))) if arg != masked]
        raise UpgradeError(MESSAGES["SECRET"].format(name="vllm_server_extra_args", keys=", ".join(flags) or "a value",
                                                     doc=TROUBLESHOOTING))
    for name in VERSION_VARIABLES:
        text = _template_text(version[name])
        if text:
            raise UpgradeError(MESSAGES["TEMPLATE"].format(name=name, text=json.dumps(text[:60]), doc=TROUBLESHOOTING))
    return version


def _template_text(value: t.Any) -> str:
    """The first string in value that Ansible would render as a template, or ""."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return next((found for found in map(_template_text, value) if found), "")
    return value if isinstance(value, str) and ("{{" in value or "{%" in value or "{#" in value) else ""


def normal(value: t.Any) -> t.Any:
    """A value as -e and the inventory both give it: scalars as text (-e max_model_len=256 is "256", the inventory's
    256 an integer; true and "true" the same), lists and dicts of them; None as empty."""
    if isinstance(value, dict):
        return {str(key): normal(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normal(item) for item in value]
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return "true" if value.strip().lower() in ("true", "yes") else "false"
    return str(value)


def settings_hash(version: t.Mapping[str, t.Any]) -> str:
    """sha256 of the version's values, key-sorted JSON: two records with the same hash ran the same settings."""
    return "sha256:" + hashlib.sha256(json.dumps(version, sort_keys=True, default=str).encode()).hexdigest()


def deployed_record(version: t.Mapping[str, t.Any], images: t.Mapping[str, t.Mapping[str, t.Any]], cluster: str,
                    date: str, previous: t.Mapping[str, t.Any] | None = None) -> dict[str, t.Any]:
    """What a site.yml run that deployed the whole cluster leaves as its last known good version. images: each
    node's {image_id, vllm_version, ray_version}, which must agree (docker_runtime's F10 saw to it). The previous
    record's date stays when it records the same (a re-run rewrites nothing)."""
    ids = {str(facts.get("image_id") or "") for facts in images.values()}
    if len(ids) != 1 or not next(iter(ids)).startswith("sha256:"):
        raise UpgradeError(f"the nodes do not report one image ID: {sorted(ids)}")
    first = images[sorted(images)[0]]
    record = {"version": RECORD_VERSION, "cluster": cluster, "date": date, "nodes": sorted(images),
              "image": version["vllm_cluster_image"], "image_id": next(iter(ids)),
              "vllm_version": str(first.get("vllm_version") or ""), "ray_version": str(first.get("ray_version") or ""),
              "model": version["vllm_server_model"], "model_revision": version["vllm_cluster_model_revision"],
              "settings_hash": settings_hash(version), "values": dict(version)}
    if previous and dict(previous, date=date) == record:
        record["date"] = previous["date"]
    return record


def valid_record(document: t.Any) -> dict[str, t.Any]:
    """A record as site.yml writes it, else {}."""
    if not isinstance(document, dict) or document.get("version") != RECORD_VERSION:
        return {}
    values = document.get("values")
    if not isinstance(values, dict) or set(values) != set(VERSION_VARIABLES):
        return {}
    if not isinstance(document.get("image_id"), str) or not document["image_id"].startswith("sha256:"):
        return {}
    if document.get("settings_hash") != settings_hash(values):
        return {}
    return document


def repointed(record: t.Mapping[str, t.Any], image: str, found_ids: t.Mapping[str, str]) -> str:
    """F29 when a node holds another image under the record's image name; "" when the name is another one (an
    upgrade: not this check's business), the IDs agree, or there is no record. A node without the image yet (it is
    about to pull or load it) is judged after that, by the next call."""
    if not record or record.get("image") != image:
        return ""
    for host in sorted(found_ids):
        found = found_ids[host]
        if found and found != record["image_id"]:
            return MESSAGES["REPOINTED"].format(host=host, image=image, found=_short(found),
                                                recorded=_short(record["image_id"]), date=record.get("date", "?"),
                                                doc=TROUBLESHOOTING)
    return ""


def plan(record: t.Mapping[str, t.Any], target: t.Mapping[str, t.Any],
         found_ids: t.Mapping[str, str]) -> dict[str, t.Any]:
    """From the last known good record to the target version (the inventory's values): each change (name, from, to),
    the extra variables of the way forward and of the way back, and whether there is anything to do. The image
    counts as changed when its name does, or when a node holds another image under the same name (a re-pushed tag
    pulled on purpose). The way back names the old image by its ID when the new version reuses its name."""
    recorded = {name: normal(record["values"][name]) for name in VERSION_VARIABLES}
    changes = [{"name": name, "from": recorded[name], "to": target[name]}
               for name in VERSION_VARIABLES if recorded[name] != target[name]]
    moved = sorted(host for host, found in found_ids.items() if found and found != record["image_id"])
    same_name = target["vllm_cluster_image"] == record["image"]
    if same_name and moved:
        changes.insert(0, {"name": "image ID of " + record["image"], "from": _short(record["image_id"]),
                           "to": ", ".join(f"{host} {_short(found_ids[host])}" for host in moved)})
    back = dict(recorded)
    if same_name:
        back["vllm_cluster_image"] = record["image_id"]
        back["vllm_cluster_image_archive"] = ""
    forward = dict(target)
    return {"changes": changes, "nothing": not changes, "forward": forward, "back": back,
            "forward_hash": settings_hash(forward),
            "back_model": back["vllm_server_served_model_name"] or back["vllm_server_model"],
            "image_changes": any(change["name"].startswith(("vllm_cluster_image", "image ID")) for change in changes),
            "describe_from": describe(recorded, record["image_id"]),
            "describe_to": describe(target, "")}


def describe(values: t.Mapping[str, t.Any], image_id: str) -> str:
    shown = f"{values.get('vllm_cluster_image')}"
    if image_id:
        shown += f" ({_short(image_id)})"
    return f"{shown}, model {values.get('vllm_server_model')}@{values.get('vllm_cluster_model_revision')}"


def _short(image_id: str) -> str:
    return image_id[7:19] if image_id.startswith("sha256:") else image_id


def trial_problem(trial: t.Mapping[str, t.Any], plan_: t.Mapping[str, t.Any], path: str) -> str:
    """Whether the way forward's site.yml recorded the version planned (its record becomes the last known good)."""
    if trial and trial.get("settings_hash") == plan_["forward_hash"]:
        return ""
    return MESSAGES["TRIAL"].format(path=path, found=(trial or {}).get("settings_hash") or "none",
                                    doc=TROUBLESHOOTING)


def premeasure_problem(problems: t.Sequence[str], host: str) -> str:
    """Before anything changes: the running version's benchmark had problems, so the new one could not be judged."""
    if not problems:
        return ""
    return MESSAGES["NO_BASELINE"].format(host=host, problems=" ".join(problems), doc=TROUBLESHOOTING)


def df_available(output: str) -> int:
    """Bytes available from `df -P -B1 PATH`'s output (its last line's fourth column); UpgradeError when unreadable."""
    lines = [line for line in str(output).splitlines() if line.strip()]
    try:
        return int(lines[-1].split()[3])
    except (IndexError, ValueError):
        raise UpgradeError(f"df gave no free space to read: {str(output)[-200:]!r}") from None


def disk_problem(host: str, free_bytes: int, root: str, need_gib: float) -> str:
    free = free_bytes / 2**30
    if free >= need_gib:
        return ""
    return MESSAGES["DISK"].format(host=host, free=f"{free:.1f}", root=root, need=f"{need_gib:g}", doc=TROUBLESHOOTING)


def answer_problems(results: t.Sequence[t.Mapping[str, t.Any]], host: str) -> list[str]:
    """What is wrong with the answers to the fixed prompts (the uri module's results, one per prompt): each must be
    HTTP 200 with a completion whose text is not empty, a finish reason, and at least one completion token."""
    found = []
    for result in results:
        prompt = json.dumps(str(result.get("item", "?"))[:60])
        what = _answer_fault(result)
        if what:
            found.append(MESSAGES["ANSWER"].format(host=host, prompt=prompt, what=what, doc=TROUBLESHOOTING))
    return found


def _answer_fault(result: t.Mapping[str, t.Any]) -> str:
    status = result.get("status")
    if status != 200:
        return f"HTTP {status}: {' '.join(str(result.get('msg', '')).split())[:200]}"
    answer = result.get("json")
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "an answer without choices"
    text = choices[0].get("text")
    if not isinstance(text, str) or not text.strip():
        return "an empty completion"
    if choices[0].get("finish_reason") not in ("length", "stop"):
        return f"no finish reason ({choices[0].get('finish_reason')!r})"
    usage = answer.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        return f"no completion tokens counted ({tokens!r})"
    return ""


# The default callback's failed results, as the inner runs print them (ANSIBLE_CALLBACK_RESULT_FORMAT=json, one
# line each): "fatal: [host]: FAILED! => {...}" or "failed: [host] (item=...) => {...}".
_FAILED = re.compile(r"^(?:fatal|failed): \[(?P<host>[^\]]+)\].*?=> (?P<result>\{.*\})\s*$")
_TASK = re.compile(r"^TASK \[(?P<name>.*)\] \**$")


def failures(lines: t.Iterable[str], limit: int = 3) -> list[str]:
    """What an inner run's log says failed: each failed result's message with its host and task, at most `limit`."""
    found: list[str] = []
    task = ""
    for line in lines:
        heading = _TASK.match(line)
        if heading:
            task = heading.group("name")
            continue
        failed = _FAILED.match(line)
        if not failed:
            continue
        try:
            result = json.loads(failed.group("result"))
        except ValueError:
            result = {}
        message = result.get("msg") if isinstance(result, dict) else None
        if not isinstance(message, str) or not message.strip():
            message = "failed without a message"
        entry = f"{failed.group('host')}: {' '.join(message.split())[:800]} (task: {task})"
        if entry not in found:
            found.append(entry)
        if len(found) >= limit:
            break
    return found


# What the calling run's command line gave that the inner run needs too (context.CLIARGS name -> option), in order.
# Its extra variables apart: they may carry secrets (an API key given with -e), the others are options.
_PASSED_ON_LISTS = (("vault_ids", "--vault-id"), ("vault_password_files", "--vault-password-file"))
_PASSED_ON_VALUES = (("private_key_file", "--private-key"), ("remote_user", "-u"), ("connection", "-c"),
                     ("timeout", "-T"), ("ssh_common_args", "--ssh-common-args"),
                     ("ssh_extra_args", "--ssh-extra-args"), ("sftp_extra_args", "--sftp-extra-args"),
                     ("scp_extra_args", "--scp-extra-args"), ("connection_password_file", "--connection-password-file"),
                     ("become_method", "--become-method"), ("become_user", "--become-user"),
                     ("become_password_file", "--become-password-file"), ("forks", "--forks"))
_PROMPTS = (("ask_vault_pass", "--ask-vault-pass"), ("ask_pass", "--ask-pass"), ("become_ask_pass", "--ask-become-pass"))


def passed_on(cli: t.Mapping[str, t.Any]) -> list[str]:
    """The calling run's command-line options the inner runs get as they were given (its extra variables are
    passed apart: extra_vars()): vault identities and password files, the connection (SSH key, user, arguments,
    timeout, password file), privilege escalation, forks. Not --limit, --tags or --check: an inner run deploys the
    whole cluster."""
    argv: list[str] = []
    for name, option in _PASSED_ON_LISTS:
        for value in cli.get(name) or ():
            argv += [option, str(value)]
    for name, option in _PASSED_ON_VALUES:
        value = cli.get(name)
        if value not in (None, ""):
            argv += [option, str(value)]
    if cli.get("become"):
        argv.append("--become")
    return argv


def extra_vars(cli: t.Mapping[str, t.Any]) -> list[str]:
    """The calling run's -e values as it was given them (key=value, JSON, @file made absolute by Ansible)."""
    return [str(value) for value in cli.get("extra_vars") or ()]


def prompts_asked(cli: t.Mapping[str, t.Any]) -> str:
    """Why the inner runs cannot start: the calling run asked for a password at its prompt (an option, or a vault id
    whose source is @prompt), which a run in the background cannot ask."""
    asked = [option for name, option in _PROMPTS if cli.get(name)]
    asked += [f"--vault-id {value}" for value in cli.get("vault_ids") or () if str(value).endswith("@prompt")]
    if not asked:
        return ""
    return MESSAGES["PROMPT"].format(options=", ".join(asked), doc=TROUBLESHOOTING)


def playbook_argv(python: str, playbook: str, inventories: t.Sequence[str], passed: t.Sequence[str],
                  var_files: t.Sequence[str], verbosity: int, given: t.Sequence[str] = ()) -> list[str]:
    """The inner run: the same Python as this one, site.yml, the same inventories, the calling run's own options
    (passed_on) and extra variables (given), then the version as extra variables from files (later ones win)."""
    argv = [python, "-m", "ansible", "playbook", playbook]
    for inventory in inventories:
        argv += ["-i", inventory]
    argv += list(passed)
    for value in given:
        argv += ["-e", value]
    for path in var_files:
        argv += ["-e", "@" + path]
    if verbosity > 0:
        argv.append("-" + "v" * min(int(verbosity), 4))
    return argv


def report(plan_: t.Mapping[str, t.Any], stage: str, why: t.Sequence[str], back_ok: bool, back_why: t.Sequence[str],
           restored: str, logs: t.Sequence[str]) -> str:
    """The play's failure message after a rollback (stage: deploy or accept)."""
    reason = " ".join(why) or "see the log"
    if not back_ok:
        return MESSAGES["ROLLBACK_FAILED"].format(to=plan_["describe_to"], why=reason, back=plan_["describe_from"],
                                                  back_why=" ".join(back_why) or "see the log",
                                                  log=", ".join(logs), doc=TROUBLESHOOTING)
    key = "DEPLOY_FAILED" if stage == "deploy" else "NOT_ACCEPTED"
    where = "site.yml with the new values" if stage == "deploy" else "fixed prompts and the benchmark"
    return MESSAGES[key].format(to=plan_["describe_to"], where=where, back=plan_["describe_from"], restored=restored,
                                why=reason, log=", ".join(logs), doc=TROUBLESHOOTING)
