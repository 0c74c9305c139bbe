"""Independent reference for the hydrogen-bond search (`analysis::hbonds`, `tests/hbonds.rs`).

MDAnalysis 2.11.0's HydrogenBondAnalysis on three systems of tests/data/md, with its default
criteria (donor-acceptor 3.0 A, donor-hydrogen-acceptor at least 150 degrees, donor-hydrogen pairs
within 1.2 A) and donors and acceptors every nitrogen and oxygen (ions left out), hydrogens every
hydrogen; periodic boxes read with the minimum image, as MDAnalysis does by default. Writes
reference.json.gz: per system and frame the sorted (donor, hydrogen, acceptor) 0-based atom indices,
and for each triple the D...A distance and the D-H...A angle, so a test can tell a disagreement
at the criteria's edge (float32 rounding) from a real one.

    python3 -m venv venv && venv/bin/pip install MDAnalysis==2.11.0
    venv/bin/python tests/data/hbonds/make_reference.py
"""

import gzip
import json
import os
import warnings

import MDAnalysis as mda
import numpy as np
from MDAnalysis.analysis.hydrogenbonds import HydrogenBondAnalysis
from MDAnalysis.lib.distances import calc_angles, calc_bonds

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "md")

POLAR = "(name N* O*) and not resname NA CL SOD CLA POT K"
SYSTEMS = [
    ("adk", ["adk.psf", "adk_dims.dcd"], [0, 40, 97]),
    ("adk_oplsaa", ["adk_oplsaa.gro", "adk_oplsaa.xtc"], [0, 5, 9]),
    ("tip125_tric", ["tip125_tric_C36.psf", "tip125_tric_C36.dcd"], [0, 3]),
]

out = {"mdanalysis": mda.__version__, "criteria": {"d_a_cutoff": 3.0, "d_h_a_angle_cutoff": 150.0, "d_h_cutoff": 1.2}, "systems": {}}
for name, files, frames in SYSTEMS:
    u = mda.Universe(*[os.path.join(MD, f) for f in files])
    frames = [f for f in frames if f < len(u.trajectory)]
    h = HydrogenBondAnalysis(
        u,
        donors_sel=POLAR,
        hydrogens_sel="name H*",
        acceptors_sel=POLAR,
        d_a_cutoff=3.0,
        d_h_a_angle_cutoff=150.0,
        d_h_cutoff=1.2,
    )
    h.run(frames=frames)
    rows = h.results.hbonds
    sys_out = {"files": files, "atoms": len(u.atoms), "frames": {}}
    for f in frames:
        sel = rows[rows[:, 0] == f]
        triples = sorted((int(r[1]), int(r[2]), int(r[3])) for r in sel)
        u.trajectory[f]
        pos = u.atoms.positions
        box = u.dimensions
        d, hh, a = (np.array([t[k] for t in triples], dtype=int) for k in range(3))
        dist = calc_bonds(pos[d], pos[a], box=box) if triples else []
        ang = np.degrees(calc_angles(pos[d], pos[hh], pos[a], box=box)) if triples else []
        sys_out["frames"][str(f)] = [
            [t[0], t[1], t[2], round(float(x), 4), round(float(y), 3)] for t, x, y in zip(triples, dist, ang)
        ]
        print(name, f, len(triples))
    out["systems"][name] = sys_out

with gzip.open(os.path.join(HERE, "reference.json.gz"), "wt") as fh:
    json.dump(out, fh, separators=(",", ":"))
