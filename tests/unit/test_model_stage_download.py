"""The head's download script (roles/model_stage/files/download.py) asks the hub for the revision's size and refuses
before any byte moves when the cache lacks the room for what it does not hold yet; while it downloads, a marker says
so (#31 item 10, and an interrupted download not taken for a whole snapshot). The hub is not reachable from here: a
stand-in huggingface_hub package answers with the files given and records whether a download started."""

from __future__ import annotations

import hashlib
import pathlib
import shutil
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "roles" / "model_stage" / "files" / "download.py"
FOLDER = "models--org--m"

HUB = """
import json, os, types
class HfApi:
    def model_info(self, model, revision=None, files_metadata=False):
        assert files_metadata
        files = json.loads(os.environ["HUB_FILES"])
        return types.SimpleNamespace(siblings=[
            types.SimpleNamespace(size=size, lfs=types.SimpleNamespace(sha256=sha) if sha else None)
            for sha, size in files])
def snapshot_download(model, revision=None):
    marker = os.path.join(os.environ["HF_HOME"], "inferops-weights", "models--org--m.downloading")
    open(os.environ["HUB_LOG"], "a").write(f"download {model} {revision} marker={open(marker).read().strip()}\\n")
    if os.environ.get("HUB_FAIL"):
        raise OSError("connection reset")
    return f"/root/.cache/huggingface/hub/{model}/{revision}"
"""


def run(tmp_path, files, fail=False):
    (tmp_path / "huggingface_hub").mkdir(exist_ok=True)
    (tmp_path / "huggingface_hub" / "__init__.py").write_text(HUB)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HF_HOME": str(tmp_path), "HUB_LOG": str(tmp_path / "log"),
           "HUB_FILES": __import__("json").dumps(files), **({"HUB_FAIL": "1"} if fail else {})}
    return subprocess.run([sys.executable, "-c", SCRIPT.read_text(), "org/m", "v1", "spark-1", "/var/lib/hf"], env=env,
                          capture_output=True, text=True, timeout=30, check=False)


def test_what_fits_is_downloaded_and_the_marker_says_so_until_it_is_done(tmp_path):
    result = run(tmp_path, [["", 1000], ["a" * 64, 2000]])
    assert result.returncode == 0 and result.stdout.strip() == "/root/.cache/huggingface/hub/org/m/v1"
    assert (tmp_path / "log").read_text() == "download org/m v1 marker=v1\n"
    assert not (tmp_path / "inferops-weights" / f"{FOLDER}.downloading").exists()


def test_an_interrupted_download_leaves_its_marker(tmp_path):
    assert run(tmp_path, [["", 10]], fail=True).returncode == 1
    assert (tmp_path / "inferops-weights" / f"{FOLDER}.downloading").read_text() == "v1\n"


def test_what_does_not_fit_is_refused_before_any_byte(tmp_path):
    result = run(tmp_path, [["b" * 64, 10 ** 15], ["", 1]])
    free = shutil.disk_usage(tmp_path).free / 1e9
    assert result.returncode == 1 and not (tmp_path / "log").exists()
    assert result.stderr.startswith(f"[F17] spark-1: org/m v1 needs 1000000.0 GB more from the hub, but the filesystem "
                                    f"of /var/lib/hf has {free:.0f}".rsplit(".", 1)[0]), result.stderr


def test_blobs_already_downloaded_are_not_counted_again(tmp_path):
    """A resumed download of a large revision on a nearly full disk: only what is missing must fit."""
    blobs = tmp_path / "hub" / FOLDER / "blobs"
    blobs.mkdir(parents=True)
    content = b"w" * 4096
    sha = hashlib.sha256(content).hexdigest()
    (blobs / sha).write_bytes(content)
    # Larger than the whole disk, so that no other writer changing the free space meanwhile makes it fit.
    never_fits = shutil.disk_usage(tmp_path).total + 1
    # the revision is larger than the free space, but all of it but 1 byte is already there
    result = run(tmp_path, [[sha, never_fits + 4096], ["c" * 64, 1]])
    assert result.returncode == 1, "the blob's size differs from the hub's: counted as missing"
    result = run(tmp_path, [[sha, 4096], ["c" * 64, 1]])
    assert result.returncode == 0, result.stderr
    too_big = run(tmp_path, [[sha, 4096], ["c" * 64, never_fits]])
    assert too_big.returncode == 1 and "needs" in too_big.stderr


@pytest.mark.parametrize("present", [False, True])
def test_the_missing_bytes_count_only_blobs_of_the_right_size(tmp_path, present):
    blobs = tmp_path / "hub" / FOLDER / "blobs"
    blobs.mkdir(parents=True)
    if present:
        (blobs / ("d" * 64)).write_bytes(b"x" * 10)
    (blobs / ("e" * 64)).write_bytes(b"x" * 3)  # a partial blob of the wrong size counts as missing
    namespace: dict = {}
    source = SCRIPT.read_text()
    exec(compile(source[:source.index("def main")].replace("from huggingface_hub import HfApi, snapshot_download", ""),
                 str(SCRIPT), "exec"), namespace)  # pylint: disable=exec-used
    sibling = __import__("types").SimpleNamespace
    siblings = [sibling(size=10, lfs=sibling(sha256="d" * 64)), sibling(size=5, lfs=sibling(sha256="e" * 64)),
                sibling(size=7, lfs=None)]
    assert namespace["missing_bytes"](siblings, str(blobs)) == (12 if present else 22)
