"""The program docker_runtime runs inside the runtime image to read its Ray and vLLM versions (F11, F24), run by
a real Python against stand-in packages: what an import reports wins over the metadata (an image whose Ray was
patched reports the patched version), a vLLM that cannot import without a GPU still has its installed version,
a Ray that does not import is named with its error."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

PROGRAM = pathlib.Path(__file__).resolve().parents[2] / "roles" / "docker_runtime" / "files" / "image_versions.py"


def package(root: pathlib.Path, name: str, source: str | None, dist_version: str | None = None) -> None:
    if source is not None:
        (root / name).mkdir()
        (root / name / "__init__.py").write_text(source)
    if dist_version:
        info = root / f"{name}-{dist_version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {dist_version}\n")


def versions(root: pathlib.Path) -> dict:
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(root)!r}); "
                           f"exec(open({str(PROGRAM)!r}).read())"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "case, ray, vllm, expected",
    [
        ("both import", ("__version__ = '2.60.0'", "2.60.0"), ("__version__ = '0.32.0'", None),
         {"ray_version": "2.60.0", "vllm_version": "0.32.0"}),
        ("a patched Ray reports what it runs, not its metadata", ("__version__ = '2.50.0'", "2.60.0"),
         ("__version__ = '0.17.1'", None), {"ray_version": "2.50.0", "vllm_version": "0.17.1"}),
        ("vLLM that needs a GPU to import: its installed version", ("__version__ = '2.60.0'", None),
         ("raise RuntimeError('no CUDA device')", "0.17.1"), {"ray_version": "2.60.0", "vllm_version": "0.17.1"}),
        ("no __version__: the metadata", ("", "2.52.1"), ("", "0.10.1.1"),
         {"ray_version": "2.52.1", "vllm_version": "0.10.1.1"}),
    ],
)
def test_versions(tmp_path, case, ray, vllm, expected):
    package(tmp_path, "ray", *ray)
    package(tmp_path, "vllm", *vllm)
    assert versions(tmp_path) == expected, case


def test_a_ray_that_does_not_import_is_named_even_when_installed(tmp_path):
    package(tmp_path, "ray", "raise ImportError('libstdc++.so.6: version GLIBCXX_3.4.32 not found')", "2.60.0")
    package(tmp_path, "vllm", "__version__ = '0.17.1'")
    found = versions(tmp_path)
    assert found["ray_version"] == ""
    assert found["ray_error"] == "ImportError: libstdc++.so.6: version GLIBCXX_3.4.32 not found"
