"""Every role documents every variable it accepts, and validates every default it ships."""

from __future__ import annotations

import pathlib

import pytest
import yaml

ROLES = sorted(p for p in (pathlib.Path(__file__).resolve().parents[2] / "roles").iterdir() if p.is_dir())


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_defaults_specs_and_readme_agree(role):
    spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]
    options = set(spec.get("options") or {})
    defaults_file = role / "defaults" / "main.yml"
    defaults = set(yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.exists() else set()
    assert defaults <= options, f"defaults without an argument spec: {sorted(defaults - options)}"
    readme = (role / "README.md").read_text()
    undocumented = sorted(name for name in options if f"`{name}`" not in readme)
    assert not undocumented, f"{role.name}/README.md does not document {undocumented}"
    prefix = "vllm_cluster_" if role.name == "vllm_cluster" else f"{role.name}_"
    assert all(name.startswith(prefix) for name in defaults), f"{role.name} defaults must use the {prefix} prefix"
