"""Roles talk through documented variables only (issue #17): no role or playbook reads another role's
_-prefixed names or registered results, each role registers under its own prefix, and every call of the
private _common role names an entry point, passes each of its required inputs and takes its result under the
caller's own name."""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())
COMMON_SPECS = yaml.safe_load((ROOT / "roles" / "_common" / "meta" / "argument_specs.yml").read_text())["argument_specs"]
COMMON_DEFAULTS = yaml.safe_load((ROOT / "roles" / "_common" / "defaults" / "main.yml").read_text())
# The inputs of _common's entry points are its documented interface: callers pass them at the call site.
COMMON_INPUTS = {name for spec in COMMON_SPECS.values() for name in spec.get("options") or {}}
# The one fact _common keeps for the whole run (its README: the `engine` entry point's answer), read by the callers
# to skip the include once an earlier layer read the node's engine.
COMMON_RUN_FACTS = {"_common_engine"}


def owner(path: pathlib.Path) -> str | None:
    """The role a file belongs to, or None for a playbook."""
    parts = path.relative_to(ROOT).parts
    return parts[1] if parts[0] == "roles" else None


def sources() -> list[pathlib.Path]:
    files = [*(ROOT / "roles").rglob("*.yml"), *(ROOT / "roles").rglob("*.j2"), *(ROOT / "playbooks").rglob("*.yml")]
    return sorted(files) + [ROOT / "site.yml"]


def private_reads(path: pathlib.Path, text: str | None = None) -> list[str]:
    """Every _<role>_ name in a file (its text, or `text`) that belongs to another role (any role, for a playbook)."""
    text = path.read_text() if text is None else text
    found = []
    for role in ROLES:
        if role == owner(path):
            continue
        prefix = "_" + role.lstrip("_") + "_"
        found += [f"{path.relative_to(ROOT)}: {m.group(1)}"
                  for m in re.finditer(rf"(?<![A-Za-z0-9_])({re.escape(prefix)}[a-z0-9_]+)", text)
                  if m.group(1) not in COMMON_INPUTS | COMMON_RUN_FACTS]
    return found


def tasks_in(node):
    """Every task of a task list or play, blocks opened."""
    if isinstance(node, list):
        for item in node:
            yield from tasks_in(item)
    elif isinstance(node, dict):
        if any(k in node for k in ("block", "tasks", "pre_tasks", "post_tasks", "handlers")):
            for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
                yield from tasks_in(node.get(key) or [])
        else:
            yield node


def task_files() -> list[pathlib.Path]:
    return sorted({*(ROOT / "roles").glob("*/tasks/*.yml"), *(ROOT / "roles").glob("*/handlers/*.yml"),
                   *(ROOT / "playbooks").glob("*.yml"), ROOT / "tests" / "render" / "render.yml"})


def common_calls():
    for path in task_files():
        for task in tasks_in(yaml.safe_load(path.read_text()) or []):
            include = task.get("ansible.builtin.include_role") or task.get("include_role")
            if include and include.get("name") == "inferops.vllm_cluster._common":
                yield path, task, include


def test_no_role_or_playbook_reads_another_roles_private_names():
    found = [read for path in sources() for read in private_reads(path)]
    assert not found, "\n".join(found)


def test_the_check_finds_a_read_of_another_roles_private_name():
    # The check itself must be able to fail: ray_worker reading ray_head's registered result, as it once did.
    path = ROOT / "roles" / "ray_worker" / "vars" / "main.yml"
    text = path.read_text() + "_ray_worker_x: \"{{ hostvars[vllm_cluster_head]['_ray_head_container_result'] }}\"\n"
    assert private_reads(path, text) == ["roles/ray_worker/vars/main.yml: _ray_head_container_result"]


@pytest.mark.parametrize("path", [p for p in task_files() if owner(p) is not None], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_role_registers_under_its_own_prefix(path):
    role = owner(path)
    prefix = "_" + role.lstrip("_") + "_"
    registered = [task["register"] for task in tasks_in(yaml.safe_load(path.read_text()) or []) if "register" in task]
    assert all(name.startswith(prefix) for name in registered), f"{registered} in {path.name} must start with {prefix}"


def registered_names() -> set[str]:
    """What tasks found: their registered results, and the facts _common's entry points set for their callers (named
    by _common_result)."""
    names = set()
    for path in task_files():
        for task in tasks_in(yaml.safe_load(path.read_text()) or []):
            names.update([task["register"]] if "register" in task else [])
            include = task.get("ansible.builtin.include_role") or task.get("include_role") or {}
            result = (task.get("vars") or {}).get("_common_result") or (include.get("vars") or {}).get("_common_result")
            names.update([result] if isinstance(result, str) and "{" not in result else [])
    return names


def vars_reading_registered(path: pathlib.Path, registered: set[str], text: str | None = None) -> list[str]:
    """The variables of a role's vars/main.yml whose expression reads a task's registered result."""
    found = []
    for name, value in (yaml.safe_load(text if text is not None else path.read_text()) or {}).items():
        expression = yaml.safe_dump(value)
        found += [f"{path.relative_to(ROOT)}: {name} reads {read}" for read in sorted(registered)
                  if re.search(rf"\b{re.escape(read)}\b", expression)]
    return found


def test_no_role_vars_are_computed_from_a_registered_result():
    """vars/ holds what the inventory decides; what a task found is decided in the task that reads it (a filter, in
    a set_fact or in the vars of the task that acts on it), where the order of reads and writes is visible."""
    registered = registered_names()
    assert len(registered) > 20, "the registered results were not found"
    found = [read for path in sorted((ROOT / "roles").glob("*/vars/main.yml")) for read in vars_reading_registered(path, registered)]
    assert not found, "\n".join(found)


def test_the_check_finds_vars_computed_from_a_result_of_common():
    # vLLM's "secrets changed" read from what _common's env file entry point returned, as it once was
    path = ROOT / "roles" / "vllm_server" / "vars" / "main.yml"
    text = path.read_text() + "_vllm_server_x: \"{{ _vllm_server_env_result.changed | default(false) }}\"\n"
    assert vars_reading_registered(path, registered_names(), text) == [
        "roles/vllm_server/vars/main.yml: _vllm_server_x reads _vllm_server_env_result"]


def test_the_check_finds_vars_computed_from_a_registered_result():
    # the check itself must be able to fail: the worker's start decision read from its two reads, as it once was
    path = ROOT / "roles" / "ray_worker" / "vars" / "main.yml"
    text = path.read_text() + "_ray_worker_x: \"{{ _ray_worker_self.containers | default({}) }}\"\n"
    assert vars_reading_registered(path, registered_names(), text) == [
        "roles/ray_worker/vars/main.yml: _ray_worker_x reads _ray_worker_self"]


def test_every_call_of_common_names_an_entry_point_with_its_required_inputs():
    calls = list(common_calls())
    assert len(calls) >= 10, "the callers of _common were not found"
    for path, task, include in calls:
        entry = include.get("tasks_from", "main").removesuffix(".yml")
        assert entry in COMMON_SPECS and entry != "main", f"{path.name}: {task['name']}: no entry point {entry}"
        options = COMMON_SPECS[entry].get("options") or {}
        given = set((task.get("vars") or {}) | (include.get("vars") or {}))
        required = {name for name, spec in options.items() if spec.get("required")}
        assert required <= given, f"{path.name}: {task['name']}: {entry} needs {sorted(required - given)}"
        unknown = given - set(options)
        assert not unknown, f"{path.name}: {task['name']}: {entry} has no input {sorted(unknown)}"
        optional = {name for name, spec in options.items() if not spec.get("required")}
        assert optional <= set(COMMON_DEFAULTS), f"{entry}: optional inputs without a default: {optional - set(COMMON_DEFAULTS)}"


def test_every_role_and_playbook_call_of_common_leaves_the_spec_to_this_test():
    # the test above is the check; Ansible's own at each include cost ~40 ms, twenty times a run (_common's README)
    calls = [(path, task) for path, task, include in common_calls()
             if "tests" not in path.parts and include.get("rolespec_validate") is not False]
    assert not calls, [f"{path.name}: {task['name']}" for path, task in calls]


def test_common_results_are_named_in_the_callers_namespace():
    for path, task, _include in common_calls():
        result = (task.get("vars") or {}).get("_common_result")
        role = owner(path)
        if result is not None and role is not None:
            assert result.startswith(f"_{role}_"), f"{path.name}: {task['name']}: result {result} outside _{role}_"


def fallbacks() -> list[tuple[str, str, str, str]]:
    """(file, role, variable, fallback) for each `<role>_<name> | default(<literal>)` read outside that role."""
    found = []
    for path in sources():
        for role in (r for r in ROLES if r != owner(path) and not r.startswith("_")):
            pattern = rf"(?<![A-Za-z0-9_])({role}_[a-z0-9_]+) \| default\(([^()]*)\)"
            found += [(str(path.relative_to(ROOT)), role, m.group(1), m.group(2))
                      for m in re.finditer(pattern, path.read_text())
                      # omit, and default(x, true) (empty counts as unset), are not fallbacks for a default
                      if m.group(2) != "omit" and "," not in m.group(2)]
    return found


@pytest.mark.parametrize("where, role, name, fallback", fallbacks(), ids=str)
def test_a_fallback_for_another_roles_variable_is_that_roles_default(where, role, name, fallback):
    # A play that does not run the role (preflight before vllm_server) reads its public variable with the
    # role's own default: the two must not drift apart.
    defaults = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())
    assert name in defaults, f"{where}: {name} is no default of {role}"
    assert yaml.safe_load(fallback) == defaults[name], f"{where}: {name} | default({fallback}) but {role} has {defaults[name]!r}"


# A backend's name is compared in one place, the backend table (plugins/module_utils/_backends.py); roles and
# playbooks read its traits (vllm_cluster_backend_traits) and dispatch by name only to validate_<backend>.yml.
BACKEND_NAME_COMPARISON = re.compile(
    r"vllm_cluster_backend\s*(==|!=|\|\s*default|is\s|in\s)"
    r"|backend\w*[\"'\])]*\s*(==|!=)\s*[\"'](ray|mp)[\"']"
    r"|[\"'](ray|mp)[\"']\s*(==|!=|in)\s*\w*backend")


def backend_name_comparisons(path: pathlib.Path, text: str | None = None) -> list[str]:
    text = path.read_text() if text is None else text
    return [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for number, line in enumerate(text.splitlines(), 1)
            if BACKEND_NAME_COMPARISON.search(line) and not line.lstrip().startswith("#")]


def test_no_role_playbook_or_plugin_compares_the_backend_by_name():
    files = [*sources(), *(ROOT / "plugins").rglob("*.py"), *(ROOT / "playbooks").rglob("*.j2"),
             *(ROOT / "molecule").rglob("*.yml"), *(ROOT / "tests" / "render").rglob("*.yml")]
    found = [hit for path in files if path.name != "_backends.py" for hit in backend_name_comparisons(path)]
    assert not found, "branch on vllm_cluster_backend_traits instead:\n" + "\n".join(found)


@pytest.mark.parametrize("line", [
    "  when: vllm_cluster_backend == 'mp'",
    "  when: vllm_cluster_backend | default('ray') == 'ray'",
    "    if settings.get(\"backend\") == \"mp\":",
    "  x: \"{{ 'a' if _diagnose_backend != 'ray' else 'b' }}\"",
    "{% if 'mp' == vllm_cluster_backend %}",
])
def test_the_check_finds_a_comparison_of_the_backend_by_name(line):
    assert backend_name_comparisons(ROOT / "site.yml", line + "\n") == [f"site.yml:1: {line.strip()}"]


def test_every_backend_has_its_validate_task_file():
    # cluster_validate dispatches by name; the argument spec accepts every name of the table.
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._backends import BACKENDS
    tasks = ROOT / "roles" / "cluster_validate" / "tasks"
    assert sorted(p.name for p in tasks.glob("validate_*.yml")) == sorted(f"validate_{name}.yml" for name in BACKENDS)
    spec = yaml.safe_load((ROOT / "roles" / "vllm_cluster" / "meta" / "argument_specs.yml").read_text())
    assert spec["argument_specs"]["settings"]["options"]["vllm_cluster_backend"]["choices"] == "{{ vllm_cluster_backends }}"
