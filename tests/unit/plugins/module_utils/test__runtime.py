"""What the container runtime's layer needs of a node: requests where nothing will install it, the image archive where
the inventory names one; every problem at once, worded as the role said them in its YAML before."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._runtime import prerequisite_problems

READY = {"python": "/usr/bin/python3", "requests": True, "installs_requests": False, "archive": "/srv/runtime.tar",
         "archive_on_node": True, "archive_found": True, "image": "lab/runtime:1"}
REQUESTS = ("spark-2: /usr/bin/python3 cannot import requests, and community.docker's modules need it to reach the "
            "Docker engine. docker_runtime installs it only on Debian/Ubuntu with docker_runtime_manage_engine. Fix: "
            "install the distribution's python3-requests (or point ansible_python_interpreter at a Python that has it).")


@pytest.mark.parametrize(("case", "changes", "expected"), [
    ("ready", {}, []),
    ("no requests, nothing installs it", {"requests": False}, [REQUESTS]),
    ("no requests, the role installs it (a managed engine on Debian/Ubuntu)",
     {"requests": False, "installs_requests": True}, []),
    ("no archive named: nothing to find", {"archive": "", "archive_found": False}, []),
    ("the archive missing on the node", {"archive_found": False},
     ["spark-2: vllm_cluster_image_archive=/srv/runtime.tar does not exist on the node. Fix: point it at a `docker "
      "save` archive of lab/runtime:1, or empty it to pull the image."]),
    ("both, at once, the archive on the controller", {"requests": False, "archive_found": False, "archive_on_node": False},
     [REQUESTS, "spark-2: vllm_cluster_image_archive=/srv/runtime.tar does not exist on the controller. Fix: point it "
                "at a `docker save` archive of lab/runtime:1, or empty it to pull the image."]),
], ids=lambda value: value if isinstance(value, str) else "")
def test_prerequisite_problems(case, changes, expected):
    assert prerequisite_problems("spark-2", dict(READY, **changes)) == expected
