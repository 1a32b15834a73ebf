"""The CUDA kernels are found by a non-editable install (a built wheel) and by the source
tree run as it is (the workflow's jobs: src/ on the path, nothing installed)."""
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_wheel_ships_the_kernels_and_the_gpu_backend_reads_them(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(REPO),
                    "-w", str(tmp_path / "dist")], check=True, capture_output=True)
    wheel, = (tmp_path / "dist").glob("seqpairs-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    kernels = sorted(p.name for p in (REPO / "gpu_kernels").glob("*.cu"))
    assert kernels and {f"seqpairs/gpu_kernels/{k}" for k in kernels} <= names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(wheel)], check=True, capture_output=True)
    # from the installed copy, not this checkout: every kernel's source as the backend reads it
    code = ("import seqpairs; from seqpairs.backends.gpu import kernels; "
            "print(seqpairs.__file__); "
            f"print(all(kernels.source(k) for k in {kernels!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(site)},
                         check=True, capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(site)) and out[1] == "True"


def test_source_tree_reads_the_kernels_beside_src(tmp_path):
    """Without site-packages (python -S: no install, not even this editable one), the
    package from src/ reads gpu_kernels/ beside it."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import seqpairs; "
            "from seqpairs.backends.gpu import kernels; print(seqpairs.__file__); "
            "print(all(kernels.source(v.source) == open(sys.argv[2] + '/' + v.source).read() "
            "for v in kernels.VARIANTS.values()))")
    out = subprocess.run([sys.executable, "-S", "-c", code, str(REPO / "src"),
                          str(REPO / "gpu_kernels")], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(REPO / "src")) and out[1] == "True"
