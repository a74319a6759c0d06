# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role's settings as one argument spec, checked once per run (action settings_check, in vllm_cluster's
derive.yml).

Ansible checks a role's `main` entry point at the start of every play that runs the role: one task each, twelve in a
run of site.yml, the validate play's among them. The collection's roles name their public entry point `settings`
instead, and the run checks them all in one task. The other roles' defaults and `required` stay out of the merged
spec: a role's defaults are its defaults/main.yml (some are expressions, such as ray_firewall's
`{{ ansible_port | default(22) }}`, which only the role's own play could evaluate), and a setting a role requires
has its default or its own check there (vllm_server_model: preflight says when it is empty), so a run of a playbook
that does not run the role is not refused for it. The check types and bounds what the inventory and the command line
set; a value the first play cannot evaluate yet (one that reads its role's default or a fact a later layer sets) is
left to its role. vllm_cluster's spec comes as its task gives it, evaluated there (its choices name the backend
table), with its defaults and required settings. Private to the collection."""

from __future__ import annotations

import re
import typing as t

ENTRY_POINT = "settings"
# vllm_cluster's settings come from its task (derive.yml), evaluated; _common has entry points for the roles, no
# settings of an operator's.
CHECKED_APART = ("vllm_cluster", "_common")

MESSAGES = {
    "no_settings": "role {role}: meta/argument_specs.yml has no `settings` entry point (the collection's roles name "
                   "their public one so, checked once per run).",
    "twice": "{option} is a setting of both {first} and {second}: a role's settings carry its name as prefix.",
    "refused": "{host}: values the collection's roles refuse: {errors}. Fix: correct them where they are set "
               "(group_vars, host_vars, -e); each role's README lists its settings ({readmes}).",
    "PRIVATE_COMMON": (
        "inferops.vllm_cluster._common is private to the collection and does nothing on its own. Use site.yml, or the "
        "roles (inferops.vllm_cluster.preflight, docker_runtime, ray_head, ...); a role of the collection calls one of "
        "its entry points with include_role and tasks_from."
    ),
}


# what another role's play provides or checks itself
LEFT_TO_THE_ROLE = ("default", "required")


def _as_the_run_checks(options: t.Mapping[str, t.Any], nested: bool = False) -> dict[str, t.Any]:
    """options without `default` (the nested ones, suboptions, too) and, at the top, without `required`: a
    suboption's `required` holds wherever its option is given."""
    kept = {}
    for name, spec in options.items():
        spec = {key: value for key, value in dict(spec).items()
                if key != "default" and (nested or key not in LEFT_TO_THE_ROLE)}
        if isinstance(spec.get("options"), t.Mapping):
            spec["options"] = _as_the_run_checks(spec["options"], nested=True)
        kept[name] = spec
    return kept


def merged_options(specs: t.Mapping[str, t.Mapping[str, t.Any]],
                   own: t.Mapping[str, t.Any] | None = None) -> tuple[dict[str, t.Any], dict[str, str]]:
    """One argument spec's options and, by option, the role it is of: vllm_cluster's (own, as given) and the
    `settings` options of every other role (role name -> its meta/argument_specs.yml, parsed) without defaults and
    without required. ValueError for a role without the entry point, or an option two roles declare."""
    merged: dict[str, t.Any] = dict(own or {})
    owner = {name: "vllm_cluster" for name in merged}
    for role in sorted(specs):
        if role in CHECKED_APART:
            continue
        entry = ((specs[role] or {}).get("argument_specs") or {}).get(ENTRY_POINT)
        if not isinstance(entry, t.Mapping):
            raise ValueError(MESSAGES["no_settings"].format(role=role))
        for name, spec in _as_the_run_checks(entry.get("options") or {}).items():
            if name in merged:
                raise ValueError(MESSAGES["twice"].format(option=name, first=owner[name], second=role))
            merged[name], owner[name] = spec, role
    return merged, owner


def problem(host: str, errors: t.Sequence[str], owner: t.Mapping[str, str], secrets: t.Iterable[t.Any] = ()) -> str:
    """The play's message for the validator's errors: every one, with each value of a setting marked no_log masked
    where it stands as a value of its own (not inside a setting's name), and the README of each role whose setting
    they name (by the settings' names, which carry their role's)."""
    named = {owner[word] for error in errors for word in re.findall(r"[A-Za-z0-9_]+", error) if word in owner}
    readmes = ", ".join(f"roles/{role}/README.md" for role in sorted(named)) or "roles/*/README.md"
    masked = []
    for error in errors:
        for secret in sorted({str(value) for value in secrets if str(value)}, key=len, reverse=True):
            error = re.sub(r"(?<![A-Za-z0-9_])" + re.escape(secret) + r"(?![A-Za-z0-9_])", "********", error)
        masked.append(error)
    return MESSAGES["refused"].format(host=host, errors="; ".join(masked), readmes=readmes)
