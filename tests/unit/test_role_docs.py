"""Every role documents every variable it accepts, and validates every default it ships."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLES = sorted(p for p in (REPO / "roles").iterdir() if p.is_dir())


# The settings are the run's: vllm_cluster's derive.yml checks every role's `settings` entry point once per run
# (module settings_check), where Ansible would check a `main` one at the start of every play that runs the role.
PUBLIC_ENTRY_POINT = "settings"


def test_every_roles_settings_are_checked_once_per_run_against_their_spec():
    for role in ROLES:
        specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
        if not role.name.startswith("_"):
            assert "main" not in specs, f"{role.name}: a main entry point is checked by Ansible in every play: keep it `settings`"
            assert PUBLIC_ENTRY_POINT in specs, role.name
    role = REPO / "roles" / "vllm_cluster"
    tasks = yaml.safe_load((role / "tasks" / "derive.yml").read_text())
    checks = [task for task in tasks if "inferops.vllm_cluster.settings_check" in task]
    assert len(checks) == 1 and "argument_specs.settings.options" in str(checks[0]), checks
    assert tasks.index(checks[0]) < 2, "the settings are checked before anything is derived from them"
    main = yaml.safe_load((role / "tasks" / "main.yml").read_text())
    assert [task.get("ansible.builtin.include_tasks") for task in main] == ["derive.yml"]
    # every other role depends on vllm_cluster, so any play of the collection's roles runs the check
    for other in ROLES:
        if other.name not in ("vllm_cluster", "_common"):
            meta = yaml.safe_load((other / "meta" / "main.yml").read_text())
            assert {"role": "inferops.vllm_cluster.vllm_cluster"} in meta["dependencies"], other.name


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_defaults_specs_and_readme_agree(role):
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    # A role's public variables are its `settings` entry point's (see above); the private _common has only entry
    # points of its own.
    entry_points = specs.values() if role.name == "_common" else [specs[PUBLIC_ENTRY_POINT]]
    options = {name for spec in entry_points for name in spec.get("options") or {}}
    defaults_file = role / "defaults" / "main.yml"
    defaults = set(yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.exists() else set()
    assert defaults <= options, f"defaults without an argument spec: {sorted(defaults - options)}"
    readme = (role / "README.md").read_text()
    undocumented = sorted(name for name in options if f"`{name}`" not in readme)
    assert not undocumented, f"{role.name}/README.md does not document {undocumented}"
    prefix = f"{role.name}_"
    assert all(name.startswith(prefix) for name in defaults), f"{role.name} defaults must use the {prefix} prefix"


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_public_derived_variables_are_documented(role):
    # Variables of vars/main.yml without a leading _ are read by other roles: they are an interface.
    vars_file = role / "vars" / "main.yml"
    public = sorted(name for name in (yaml.safe_load(vars_file.read_text()) or {}) if not name.startswith("_")) \
        if vars_file.exists() else []
    readme = (role / "README.md").read_text()
    assert all(name.startswith(f"{role.name}_") for name in public), f"{role.name}: {public} lack the role's prefix"
    undocumented = [name for name in public if f"`{name}`" not in readme]
    assert not undocumented, f"{role.name}/README.md does not document the derived {undocumented}"


# The prefixes of the collection's variables: its public roles' names.
PREFIXES = sorted(role.name for role in ROLES if not role.name.startswith("_"))


def accepted_variables() -> set[str]:
    """Every variable some role accepts: its argument specs' options (each entry point) and its defaults."""
    names = set()
    for role in ROLES:
        for spec in yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"].values():
            names |= set(spec.get("options") or {})
        defaults = role / "defaults" / "main.yml"
        names |= set(yaml.safe_load(defaults.read_text()) or {}) if defaults.exists() else set()
    return names


def test_every_variable_a_message_says_to_set_exists():
    """The Python message tables tell users `name=value`: each such name must be a variable a role accepts. F17's
    message once said model_stage_enabled=false, a name no role reads (the switch is vllm_cluster_stage_weights)."""
    pattern = re.compile(r"\b((?:%s)_[a-z0-9_]*[a-z0-9])=" % "|".join(PREFIXES))
    told = {(match.group(1), source.name) for source in sorted((REPO / "plugins").rglob("*.py"))
            for match in pattern.finditer(source.read_text())}
    assert len(told) > 10, told  # the messages were read
    known = accepted_variables()
    assert sorted(pair for pair in told if pair[0] not in known) == []
