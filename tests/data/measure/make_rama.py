"""Independent reference for the Ramachandran plot (`analysis::ramachandran`,
`tests/journey_ramachandran.rs`): MDAnalysis 2.11.0's `dihedrals.Ramachandran` on the protein of
adk (../md/adk.psf + adk_dims.dcd), frames 0 and 40: phi and psi in degrees of every residue but the
chain's first and last, with each residue's number.

    python3 -m venv venv && venv/bin/pip install MDAnalysis==2.11.0
    venv/bin/python tests/data/measure/make_rama.py
"""

import json
import os
import warnings

import MDAnalysis as mda
from MDAnalysis.analysis.dihedrals import Ramachandran

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "md")

u = mda.Universe(os.path.join(MD, "adk.psf"), os.path.join(MD, "adk_dims.dcd"))
protein = u.select_atoms("protein")
frames = [0, 40]
rama = Ramachandran(protein).run(frames=frames)
resids = [int(r.resid) for r in protein.residues[1:-1]]
out = {"mdanalysis": mda.__version__, "resids": resids, "frames": {}}
for k, f in enumerate(frames):
    out["frames"][str(f)] = [[round(float(a), 4), round(float(b), 4)] for a, b in rama.results.angles[k]]
with open(os.path.join(HERE, "adk_rama.json"), "w") as fh:
    json.dump(out, fh)
