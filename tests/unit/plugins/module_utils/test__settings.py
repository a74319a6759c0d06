"""Every role's settings as one argument spec: defaults left out, vllm_cluster's kept as its task gives them, an
option declared twice or a role without `settings` refused, and a message that names the roles' READMEs and masks
secrets. The collection's own specs merge as they are."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _settings

REPO = pathlib.Path(__file__).resolve().parents[4]


def spec(options, entry="settings"):
    return {"argument_specs": {entry: {"short_description": "x", "options": options}}}


@pytest.mark.parametrize(
    ("case", "specs", "own", "options", "owner"),
    [
        ("defaults left out, the rest kept",
         {"ray_head": spec({"ray_head_port": {"type": "int", "default": "{{ ansible_port | default(22) }}",
                                              "description": "d"}})},
         {}, {"ray_head_port": {"type": "int", "description": "d"}}, {"ray_head_port": "ray_head"}),
        ("suboptions' defaults too, required kept",
         {"bench": spec({"bench_rows": {"type": "list", "elements": "dict", "required": True,
                                        "options": {"rate": {"type": "float", "default": 1.0}}}})},
         {}, {"bench_rows": {"type": "list", "elements": "dict", "required": True, "options": {"rate": {"type": "float"}}}},
         {"bench_rows": "bench"}),
        ("vllm_cluster's own as given (defaults evaluated by its task), its file and _common's not read",
         {"vllm_cluster": spec({"vllm_cluster_x": {"type": "str"}}), "_common": spec({"_common_y": {}}, "container")},
         {"vllm_cluster_name": {"type": "str", "default": "vllm-cluster"}},
         {"vllm_cluster_name": {"type": "str", "default": "vllm-cluster"}}, {"vllm_cluster_name": "vllm_cluster"}),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_merged_options(case, specs, own, options, owner):
    assert _settings.merged_options(specs, own) == (options, owner)


@pytest.mark.parametrize(
    ("specs", "own", "message"),
    [
        ({"preflight": spec({"preflight_x": {}}, entry="main")}, {}, "role preflight: meta/argument_specs.yml has no `settings`"),
        ({"ray_head": spec({"shared_port": {}}), "ray_worker": spec({"shared_port": {}})}, {},
         "shared_port is a setting of both ray_head and ray_worker"),
        ({"ray_head": spec({"vllm_cluster_name": {}})}, {"vllm_cluster_name": {}},
         "vllm_cluster_name is a setting of both vllm_cluster and ray_head"),
    ],
)
def test_a_role_without_settings_or_an_option_declared_twice_is_refused(specs, own, message):
    with pytest.raises(ValueError, match=message):
        _settings.merged_options(specs, own)


def test_the_message_names_host_values_readmes_and_masks_secrets():
    errors = ["value of preflight_logind_remove_ipc must be one of: fail, warn, got: maybe",
              "argument 'vllm_server_api_key' is of type list and we were unable to convert to str: ['sk-live-1']"]
    owner = {"preflight_logind_remove_ipc": "preflight", "vllm_server_api_key": "vllm_server"}
    message = _settings.problem("spark-2", errors, owner, secrets={"sk-live-1"})
    assert message.startswith("spark-2: values the collection's roles refuse: value of preflight_logind_remove_ipc")
    assert "sk-live-1" not in message and "['********']" in message
    assert "(roles/preflight/README.md, roles/vllm_server/README.md)" in message


def test_the_collections_own_specs_merge_and_every_public_role_names_settings():
    specs = {path.parent.parent.name: yaml.safe_load(path.read_text())
             for path in sorted((REPO / "roles").glob("*/meta/argument_specs.yml"))}
    public = sorted(role for role in specs if not role.startswith("_"))
    assert len(public) > 10
    # a `main` entry point is checked by Ansible in every play that runs the role: the run checks `settings` once
    assert [role for role in public if "main" in specs[role]["argument_specs"]] == []
    options, owner = _settings.merged_options(specs, specs["vllm_cluster"]["argument_specs"]["settings"]["options"])
    assert {"vllm_server_model", "ray_firewall_ssh_port", "preflight_check_logind", "vllm_cluster_backend"} <= set(options)
    assert not any("default" in option for name, option in options.items() if owner[name] != "vllm_cluster")
    assert all(name.startswith(owner[name] + "_") for name in options)
