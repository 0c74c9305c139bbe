"""Independent reference for RMSD measurements over a trajectory (`app::rmsd`,
`tests/journey_rmsd.rs`): MDAnalysis 2.11.0 on adk (../md/adk.psf + adk_dims.dcd).

- `backbone_fit_ref0`: MDAnalysis.analysis.rms.RMSD(u, select="backbone", ref_frame=0), the
  RMSD after superposing each frame's backbone onto frame 0's (its third column);
- `ca_nofit_ref10`: rms.rmsd(ca(frame), ca(frame 10), superposition=False) for every frame, the
  C-alpha atoms as the frames stand;
- `protein_rgyr`, `ca_rgyr`: AtomGroup.radius_of_gyration() (mass-weighted) of the protein and of
  the C-alpha atoms at every frame.

    python3 -m venv venv && venv/bin/pip install MDAnalysis==2.11.0
    venv/bin/python tests/data/measure/make_rmsd.py
"""

import json
import os
import warnings

import MDAnalysis as mda
from MDAnalysis.analysis import rms

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "md")

u = mda.Universe(os.path.join(MD, "adk.psf"), os.path.join(MD, "adk_dims.dcd"))
fit = rms.RMSD(u, select="backbone", ref_frame=0).run()
backbone = [round(float(x), 6) for x in fit.results.rmsd[:, 2]]

ca = u.select_atoms("name CA")
u.trajectory[10]
ref = ca.positions.copy()
nofit = []
for ts in u.trajectory:
    nofit.append(round(float(rms.rmsd(ca.positions, ref, superposition=False)), 6))

protein = u.select_atoms("protein")
protein_rgyr, ca_rgyr = [], []
for ts in u.trajectory:
    protein_rgyr.append(round(float(protein.radius_of_gyration()), 6))
    ca_rgyr.append(round(float(ca.radius_of_gyration()), 6))

out = {
    "mdanalysis": mda.__version__,
    "frames": len(u.trajectory),
    "backbone_atoms": len(u.select_atoms("backbone")),
    "backbone_fit_ref0": backbone,
    "ca_nofit_ref10": nofit,
    "protein_rgyr": protein_rgyr,
    "ca_rgyr": ca_rgyr,
}
with open(os.path.join(HERE, "adk_rmsd.json"), "w") as fh:
    json.dump(out, fh, indent=1)
