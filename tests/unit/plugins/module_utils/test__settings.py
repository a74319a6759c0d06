"""Every role's settings as one argument spec: the other roles' defaults and required settings left out,
vllm_cluster's kept as its task gives them, an option declared twice or a role without `settings` refused, and a
message that names the roles' READMEs and masks secrets. The collection's own specs merge as they are, a run that
sets only what vllm_cluster requires passes them, and every role's own defaults pass its spec."""

from __future__ import annotations

import pathlib

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _backends, _settings

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
        ("suboptions' defaults too, the option's required left to the role (a suboption's holds where it is given)",
         {"bench": spec({"bench_rows": {"type": "list", "elements": "dict", "required": True,
                                        "options": {"rate": {"type": "float", "default": 1.0, "required": True}}}})},
         {}, {"bench_rows": {"type": "list", "elements": "dict", "options": {"rate": {"type": "float", "required": True}}}},
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
    # the validator's own words for a setting marked no_log, and a short secret that a setting's name contains
    options = {"vllm_server_port": {"type": "int"}, "vllm_server_api_key": {"type": "int", "no_log": True},
               "preflight_logind_remove_ipc": {"type": "str", "choices": ["fail", "warn"]}}
    checked = ArgumentSpecValidator(options).validate(
        {"vllm_server_port": "serv", "vllm_server_api_key": "sk-live-1", "preflight_logind_remove_ipc": "maybe"})
    owner = {"vllm_server_port": "vllm_server", "vllm_server_api_key": "vllm_server", "preflight_logind_remove_ipc": "preflight"}
    message = _settings.problem("spark-2", checked.error_messages, owner, secrets={"sk-live-1", "serv"})
    assert message.startswith("spark-2: values the collection's roles refuse: ")
    assert "got: maybe" in message and "vllm_server_api_key" in message and "vllm_server_port" in message
    assert "sk-live-1" not in message and "'serv'" not in message and "********" in message
    assert "(roles/preflight/README.md, roles/vllm_server/README.md)" in message


SPECS = {path.parent.parent.name: yaml.safe_load(path.read_text())
         for path in sorted((REPO / "roles").glob("*/meta/argument_specs.yml"))}


def test_the_collections_own_specs_merge_and_every_public_role_names_settings():
    specs = SPECS
    public = sorted(role for role in specs if not role.startswith("_"))
    assert len(public) > 10
    # a `main` entry point is checked by Ansible in every play that runs the role: the run checks `settings` once
    assert [role for role in public if "main" in specs[role]["argument_specs"]] == []
    options, owner = _settings.merged_options(specs, specs["vllm_cluster"]["argument_specs"]["settings"]["options"])
    assert {"vllm_server_model", "ray_firewall_ssh_port", "preflight_check_logind", "vllm_cluster_backend"} <= set(options)
    assert not any("default" in option for name, option in options.items() if owner[name] != "vllm_cluster")
    assert all(name.startswith(owner[name] + "_") for name in options)


def test_a_run_that_sets_only_what_vllm_cluster_requires_passes():
    """A playbook that runs no vLLM (metrics_targets.yml, --tags ray_firewall) is not refused for vllm_server_model."""
    # vllm_cluster's options as its task gives them: evaluated (the choices from the backend table; its expressions'
    # defaults stand for values of their own type)
    own = {name: dict({key: value for key, value in option.items() if "{{" not in str(value) or key == "description"},
                      **({"choices": list(_backends.BACKENDS)} if name == "vllm_cluster_backend" else {}))
           for name, option in SPECS["vllm_cluster"]["argument_specs"]["settings"]["options"].items()}
    options = _settings.merged_options(SPECS, own)[0]
    required = sorted(name for name, option in options.items() if option.get("required"))
    assert required == ["vllm_cluster_image", "vllm_cluster_interconnect_cidr"]
    checked = ArgumentSpecValidator(options).validate({"vllm_cluster_image": "lab/runtime:1",
                                                       "vllm_cluster_interconnect_cidr": "198.18.1.0/24"})
    assert checked.error_messages == []


@pytest.mark.parametrize("role", sorted(role for role in SPECS if not role.startswith("_")))
def test_every_roles_own_defaults_pass_its_settings_spec(role):
    """The merged check leaves a role's defaults to the role: they must pass its spec as they ship (an expression is
    evaluated in the role's play, where the check does not look: left out here too)."""
    defaults_file = REPO / "roles" / role / "defaults" / "main.yml"
    defaults = yaml.safe_load(defaults_file.read_text()) or {} if defaults_file.exists() else {}
    plain = {name: value for name, value in defaults.items() if "{{" not in str(value)}
    options = SPECS[role]["argument_specs"]["settings"]["options"]
    # expressions (the choices vllm_cluster takes from the backend table, a spec's default such as ray_firewall_persist's
    # systemd test) are evaluated in a play: left out here
    options = {name: {key: value for key, value in option.items() if "{{" not in str(value) or key == "description"}
               for name, option in options.items()}
    checked = ArgumentSpecValidator(options).validate(plain)
    assert checked.error_messages == [], role
