"""What the collection asks of Ansible's facts: gathered once a run as the subset the roles read (every playbook
alike), kept under ansible_facts only (the checkout's ansible.cfg and molecule's shared config)."""

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


def yaml_sources(folders=("roles", "playbooks")):
    """The YAML and Jinja files under the folders."""
    for folder in folders:
        for path in (REPO / folder).rglob("*"):
            if path.suffix in (".yml", ".yaml", ".j2") and path.is_file():
                yield path


def test_no_file_of_the_collection_reads_a_fact_as_a_top_level_variable():
    pattern = re.compile(r"\bansible_([a-z0-9_]+)")
    found = []
    for path in [REPO / "site.yml", *yaml_sources(FOLDERS)]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [f"{path.relative_to(REPO)}:{number}: ansible_{name}" for name in pattern.findall(line)
                      if name not in ANSIBLES_OWN]
    assert not found, "with inject_facts_as_vars = False these are undefined:\n" + "\n".join(found)


# The setup collectors every playbook gathers (gather_subset), and the facts the roles read from each. A `min` subset
# also ran lsb_release, capsh, the environment, DNS, SELinux and facts.d on every run (~0.4 s a run on the lab).
SUBSET = ["network", "distribution", "platform", "python", "service_mgr", "user", "pkg_mgr"]
COLLECTOR_OF = {
    "interfaces": "network", "default_ipv4": "network", "all_ipv4_addresses": "network",
    "os_family": "distribution", "distribution": "distribution", "machine_id": "platform", "python": "python",
    "service_mgr": "service_mgr", "user_id": "user", "pkg_mgr": "pkg_mgr",
    # set by ansible.builtin.getent, not by setup
    "getent_passwd": None,
}


def test_every_playbook_gathers_the_same_subset():
    found = {}
    for path in yaml_sources():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "gather_subset:" in line and not line.lstrip().startswith("#"):
                found[f"{path.relative_to(REPO)}:{number}"] = yaml.safe_load(line.strip().removeprefix("- "))["gather_subset"]
    assert len(found) >= 12, found
    assert {where: subset for where, subset in found.items() if subset != SUBSET} == {}


def test_every_fact_the_roles_read_is_gathered():
    # ansible_facts['x'], ansible_facts.x, hostvars[h]['ansible_facts']['x'] (an interface's facts: its own name,
    # read through the interconnect interface variable, come with network)
    pattern = re.compile(r"""ansible_facts(?:\[['"]|['"]\]\[['"]|['"]?\]?\.)([a-z_0-9]+)""")
    read = {name for path in yaml_sources() for name in pattern.findall(path.read_text())}
    assert {"interfaces", "os_family", "python", "user_id"} <= read, read
    unknown = read - set(COLLECTOR_OF)
    assert not unknown, f"facts read whose collector this test does not know: {sorted(unknown)}"
    missing = {name: COLLECTOR_OF[name] for name in read if COLLECTOR_OF[name] and COLLECTOR_OF[name] not in SUBSET}
    assert not missing, f"read but not gathered: {missing}"
