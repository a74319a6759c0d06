from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm_cluster.plugins.filter.interconnect_candidates import FilterModule


def test_filter_is_registered_and_reports_bad_cidr():
    interconnect_candidates = FilterModule().filters()["interconnect_candidates"]
    assert interconnect_candidates({"interfaces": []}, "198.18.1.0/24") == []
    with pytest.raises(AnsibleFilterError, match="not a valid CIDR"):
        interconnect_candidates({"interfaces": []}, "198.18.1.0/33")
    with pytest.raises(AnsibleFilterError, match="expects a host's ansible_facts"):
        interconnect_candidates(["not", "facts"], "198.18.1.0/24")
