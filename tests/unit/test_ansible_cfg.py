"""The checkout's ansible.cfg and molecule's shared config: settings every run of the collection relies on."""

from __future__ import annotations

import configparser
import pathlib
import re

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_facts_are_kept_under_ansible_facts_only():
    # a copy of each host's facts as top-level variables costs the controller a cleaned copy at every task
    config = configparser.ConfigParser()
    config.read(REPO / "ansible.cfg")
    assert config["defaults"].getboolean("inject_facts_as_vars") is False
    molecule = yaml.safe_load((REPO / ".config" / "molecule" / "config.yml").read_text())
    assert molecule["provisioner"]["config_options"]["defaults"]["inject_facts_as_vars"] is False


# Ansible's own variables (connection settings, the run's state, results' keys): with inject_facts_as_vars = False
# every other `ansible_<name>` would be a fact read as a top-level variable, undefined. `ansible_playbook` is the
# command's name in the tests' and lab's YAML, `ansible_job_id` async's result key.
ANSIBLES_OWN = {
    "facts", "check_mode", "diff_mode", "run_tags", "skip_tags", "limit", "play_hosts", "play_hosts_all",
    "play_batch", "play_name", "play_role_names", "role_names", "parent_role_names", "managed", "verbosity",
    "version", "config_file", "inventory_sources", "playbook_python", "failed_result", "failed_task", "loop",
    "loop_var", "index_var", "host", "port", "user", "connection", "python_interpreter", "become", "become_user",
    "become_method", "become_password", "password", "ssh_private_key_file", "job_id", "playbook", "collection_name",
    "search_path", "forks", "delegated_vars",
}
FOLDERS = ("roles", "playbooks", "lab", "molecule", "inventories", "bench", "tests/render", ".config")


def test_no_file_of_the_collection_reads_a_fact_as_a_top_level_variable():
    pattern = re.compile(r"\bansible_([a-z0-9_]+)")
    paths = [REPO / "site.yml"] + [path for folder in FOLDERS for path in (REPO / folder).rglob("*")]
    found = []
    for path in paths:
        if path.suffix in (".yml", ".yaml", ".j2") and path.is_file():
            for number, line in enumerate(path.read_text().splitlines(), 1):
                found += [f"{path.relative_to(REPO)}:{number}: ansible_{name}" for name in pattern.findall(line)
                          if name not in ANSIBLES_OWN]
    assert not found, "with inject_facts_as_vars = False these are undefined:\n" + "\n".join(found)
