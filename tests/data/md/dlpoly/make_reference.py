"""MDAnalysis's reading of the DL_POLY files in this folder: atom names (in MDAnalysis's order, by
index) and every frame's positions and box (its masses are guessed from the names, not read). Run from the
repository root: python tests/data/md/dlpoly/make_reference.py"""
import gzip
import json
import pathlib
import shutil
import tempfile
import warnings

import MDAnalysis as mda

warnings.simplefilter("ignore")
here = pathlib.Path(__file__).parent
out = {"mdanalysis": mda.__version__, "files": {}}
for name in ["CONFIG.gz", "CONFIG_minimal", "CONFIG_order", "HISTORY.gz", "HISTORY_minimal",
             "HISTORY_minimal_cell", "HISTORY_order", "HISTORY_classic"]:
    fmt = "CONFIG" if name.startswith("CONFIG") else "HISTORY"
    path = here / name
    if name.endswith(".gz"):
        # MDAnalysis's DL_POLY readers take plain files.
        plain = pathlib.Path(tempfile.mkdtemp()) / name[:-3]
        with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
        path = plain
    u = mda.Universe(str(path), format=fmt, topology_format=fmt)
    entry = {"names": [str(n) for n in u.atoms.names], "frames": [], "boxes": []}
    for ts in u.trajectory:
        entry["frames"].append([[round(float(v), 5) for v in p] for p in ts.positions])
        entry["boxes"].append(None if ts.dimensions is None else [round(float(v), 4) for v in ts.dimensions])
    out["files"][name] = entry
(here / "reference.json").write_text(json.dumps(out) + "\n")
