"""Independent reference for SASA measurements (`analysis::sasa`, `tests/journey_rmsd.rs`,
`python/tests/test_hbonds_rmsd.py`): MDTraj 1.11's `shrake_rupley` (its own C implementation:
golden-section spiral, 960 points, probe 0.14 nm) on adk (../md/adk.psf + adk_dims.dcd).

- `protein_frames`, `protein_total_angstrom2`: the whole protein's SASA at those frames;
- `n_terminal_total_angstrom2`: residues 1-50 alone (the other atoms removed first, so that they
  are their own environment, as VMD's `measure sasa` takes a selection), at the same frames;
- `protein_atoms_frame0_angstrom2`: every atom's area at frame 0.

Radii: Bondi's (H 1.20, C 1.70, N 1.55, O 1.52, S 1.80 Å), given to MDTraj explicitly.

    python3 -m venv venv && venv/bin/pip install mdtraj==1.11.1.post2
    venv/bin/python tests/data/measure/make_sasa.py
"""

import json
import os
import warnings

import mdtraj as md
import numpy as np

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "md")
RADII_NM = {"H": 0.120, "C": 0.170, "N": 0.155, "O": 0.152, "S": 0.180}

top = md.load_psf(os.path.join(MD, "adk.psf"))
traj = md.load_dcd(os.path.join(MD, "adk_dims.dcd"), top=top)
elements = sorted({a.element.symbol for a in top.atoms})
assert set(elements) <= set(RADII_NM), elements
frames = [0, 40, 97]
nterm_atoms = top.select("resid 0 to 49")  # MDTraj's residue indices are 0-based


def sasa(t):
    # One frame per call: MDTraj 1.11 gives frame 40 another total (11014.5 against 11004.4 A^2)
    # when it is computed in a batch with frames 0 and 97 than when it is computed alone.
    return np.concatenate([md.shrake_rupley(t[i], probe_radius=0.14, n_sphere_points=960,
                                            change_radii=RADII_NM) for i in range(t.n_frames)])


sub = traj[frames]
protein = sasa(sub)
nterm = sasa(sub.atom_slice(nterm_atoms))

out = {
    "mdtraj": md.__version__,
    "elements": elements,
    "protein_frames": frames,
    "protein_total_angstrom2": [round(float(x) * 100.0, 4) for x in protein.sum(axis=1)],
    "n_terminal_atoms": int(len(nterm_atoms)),
    "n_terminal_total_angstrom2": [round(float(x) * 100.0, 4) for x in nterm.sum(axis=1)],
    "protein_atoms_frame0_angstrom2": [round(float(x) * 100.0, 5) for x in protein[0]],
}
with open(os.path.join(HERE, "adk_sasa.json"), "w") as fh:
    json.dump(out, fh, indent=1)
print(out["protein_total_angstrom2"], out["n_terminal_total_angstrom2"], out["n_terminal_atoms"])
