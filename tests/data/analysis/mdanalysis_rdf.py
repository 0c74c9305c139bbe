"""Independent reference values for the RDF and selection tests, computed with MDAnalysis.

Run once (MDAnalysis 2.x and MDAnalysisTests installed) from the repository root:
    python3 tests/data/analysis/mdanalysis_rdf.py
It reads the copies of the MDAnalysisTests files in tests/data/md and writes
tests/data/analysis/mdanalysis_rdf.json.
"""
import json
import os
import time

import MDAnalysis as mda
import numpy as np
from MDAnalysis.analysis.rdf import InterRDF

here = os.path.dirname(os.path.abspath(__file__))
md = os.path.join(here, "..", "md")
out = {"mdanalysis_version": mda.__version__}

# Triclinic box: 125 TIP3P waters.
u = mda.Universe(os.path.join(md, "tip125_tric_C36.psf"), os.path.join(md, "tip125_tric_C36.dcd"))
ow = u.select_atoms("name OH2")
widths = []
for ts in u.trajectory:
    m = ts.triclinic_dimensions
    vol = abs(np.linalg.det(m))
    widths.append(min(vol / np.linalg.norm(np.cross(m[1], m[2])), vol / np.linalg.norm(np.cross(m[2], m[0])),
                      vol / np.linalg.norm(np.cross(m[0], m[1]))))
# MDAnalysis's grid search accepts cutoffs up to about 4.4 A for this box (it changes per frame).
rmax = 4.0
rdf = InterRDF(ow, ow, nbins=40, range=(0.0, rmax)).run()
out["tip125"] = {"sel": "name OH2", "n_sel": len(ow), "frames": u.trajectory.n_frames, "rmax": rmax, "bins": 40, "min_half_width": float(0.5 * min(widths)),
                 "r": rdf.results.bins.tolist(), "g": rdf.results.rdf.tolist()}

# Truncated dodecahedron: AdK in water (GROMACS OPLS-AA), water oxygens, 0-15 A.
u = mda.Universe(os.path.join(md, "adk_oplsaa.gro"), os.path.join(md, "adk_oplsaa.xtc"))
ow = u.select_atoms("resname SOL and name OW")
t0 = time.perf_counter()
rdf = InterRDF(ow, ow, nbins=75, range=(0.0, 15.0)).run()
seconds = time.perf_counter() - t0
out["adk_oplsaa"] = {"sel": "resname SOL and name OW", "n_sel": len(ow), "frames": u.trajectory.n_frames,
                     "rmax": 15.0, "bins": 75, "r": rdf.results.bins.tolist(), "g": rdf.results.rdf.tolist(),
                     "seconds_per_frame": float(seconds / u.trajectory.n_frames)}

# Selection counts on adk.psf (+ first DCD frame for geometric selections).
u = mda.Universe(os.path.join(md, "adk.psf"), os.path.join(md, "adk_dims.dcd"))
exprs = [
    "all", "protein", "backbone", "name CA", "resname GLY", "resid 10:20", "resid 1-5 or resid 200:214",
    "segid ADK", "name H*", "not name H*", "prop charge < -0.5", "prop mass > 15", "prop x > 0 and prop y < 5",
    "same residue as name OG1", "around 5 resname ALA", "(name C* or name N*) and not backbone",
    "index 0:99", "bynum 1:100",
]
out["adk_selections"] = {e: int(len(u.select_atoms(e))) for e in exprs}
with open(os.path.join(here, "mdanalysis_rdf.json"), "w") as f:
    json.dump(out, f, indent=1)
print(json.dumps({k: (v if k == "adk_selections" else "...") for k, v in out.items()}, indent=1))
