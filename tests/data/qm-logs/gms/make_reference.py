"""MDAnalysis's reading of the GAMESS logs in this folder: atom count and every frame's positions
(Angstrom). Run from the repository root: python tests/data/qm-logs/gms/make_reference.py"""
import json
import pathlib

import MDAnalysis as mda

here = pathlib.Path(__file__).parent
out = {"mdanalysis": mda.__version__, "files": {}}
for name in ["c1opt.gms.gz", "surf2wat.gms.gz", "symopt.gms.gz"]:
    u = mda.Universe(str(here / name), format="GMS", topology_format="GMS")
    frames = [[[round(float(v), 6) for v in p] for p in ts.positions] for ts in u.trajectory]
    out["files"][name] = {"atoms": len(u.atoms), "elements": list(u.atoms.names), "frames": frames}
(here / "reference.json").write_text(json.dumps(out, indent=1) + "\n")
