"""The head's download script (roles/model_stage/files/download.py) asks the hub for the revision's size and refuses
before any byte moves when the cache lacks the room (#31 item 10). The hub is not reachable from here: a stand-in
huggingface_hub package answers with the sizes given and records whether a download started."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "roles" / "model_stage" / "files" / "download.py"

HUB = """
import os, types
class HfApi:
    def model_info(self, model, revision=None, files_metadata=False):
        assert files_metadata
        sizes = [int(size) for size in os.environ["HUB_SIZES"].split(",")]
        return types.SimpleNamespace(siblings=[types.SimpleNamespace(size=size) for size in sizes])
def snapshot_download(model, revision=None):
    open(os.environ["HUB_LOG"], "a").write(f"download {model} {revision}\\n")
    return f"/root/.cache/huggingface/hub/{model}/{revision}"
"""


@pytest.mark.parametrize("sizes, downloads", [
    ("1000,2000", True),                     # fits
    (f"{10 ** 15},1", False),                # a petabyte does not
])
def test_it_downloads_only_what_fits(tmp_path, sizes, downloads):
    (tmp_path / "huggingface_hub").mkdir()
    (tmp_path / "huggingface_hub" / "__init__.py").write_text(HUB)
    log = tmp_path / "hub.log"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HF_HOME": str(tmp_path), "HUB_SIZES": sizes,
           "HUB_LOG": str(log)}
    result = subprocess.run([sys.executable, "-c", SCRIPT.read_text(), "org/m", "v1", "spark-1", "/var/lib/hf"],
                            env=env, capture_output=True, text=True, timeout=30, check=False)
    if downloads:
        assert result.returncode == 0 and result.stdout.strip() == "/root/.cache/huggingface/hub/org/m/v1"
        assert log.read_text() == "download org/m v1\n"
    else:
        free = shutil.disk_usage(tmp_path).free / 1e9
        assert result.returncode == 1 and not log.exists()
        assert result.stderr.startswith(f"[F17] spark-1: org/m v1 is 1000000.0 GB on the hub, but the filesystem of "
                                        f"/var/lib/hf has {free:.0f}".rsplit(".", 1)[0]), result.stderr
