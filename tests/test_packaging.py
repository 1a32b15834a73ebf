"""A non-editable install (a built wheel) carries the CUDA kernels and finds them."""
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
    # from the installed copy, not this checkout: every kernel's source as gpu.py reads it
    code = ("import seqpairs; from seqpairs.backends import gpu; "
            "print(seqpairs.__file__); "
            f"print(all(gpu.KERNELS.joinpath(k).read_text() for k in {kernels!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(site)},
                         check=True, capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(site)) and out[1] == "True"
