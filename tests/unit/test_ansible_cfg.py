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


# Facts the roles read (and a few more a newcomer might reach for): each only as ansible_facts[...] / ansible_facts.x.
FACT_NAMES = ("os_family", "distribution", "service_mgr", "python", "machine_id", "default_ipv4", "interfaces",
              "user_id", "architecture", "hostname", "getent_passwd", "memtotal_mb", "processor_vcpus")


def test_no_file_of_the_collection_reads_a_fact_as_a_top_level_variable():
    pattern = re.compile(r"\bansible_(%s)\b" % "|".join(FACT_NAMES))
    found = []
    for folder in ("roles", "playbooks", "lab", "molecule", "inventories", "bench"):
        for path in (REPO / folder).rglob("*"):
            if path.suffix in (".yml", ".yaml", ".j2") and path.is_file():
                for number, line in enumerate(path.read_text().splitlines(), 1):
                    if pattern.search(line):
                        found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "with inject_facts_as_vars = False these are undefined:\n" + "\n".join(found)
