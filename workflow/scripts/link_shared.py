"""Rule distance_shared: another dataset's edge list or matrix as this one's, a hard link
where the file system allows (no second copy on disk), else a copy; the same bytes."""
import os
import shutil
from pathlib import Path

source, target = snakemake.input[0], snakemake.output[0]
try:
    os.link(source, target)
    how = "linked"
except OSError:
    shutil.copyfile(source, target)
    how = "copied"
Path(snakemake.log[0]).write_text(f"{how} {source}\n")
