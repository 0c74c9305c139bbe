"""SASA over a trajectory, orbitfield against MDTraj in the same run (one thread each: run with
OMP_NUM_THREADS=1). adk (tests/data/md/adk.psf + adk_dims.dcd), the protein's Shrake-Rupley SASA
with 960 points per atom and a 1.4 A probe at every frame; the files' reading is left out of both.

    OMP_NUM_THREADS=1 python benches/sasa_mdtraj.py [ROUNDS]

Needs the Python package built in release (`cd python && maturin develop --release`) and
mdtraj 1.11.
"""

import os
import sys
import time
import warnings

import mdtraj as md
import numpy as np

import orbitfield

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "tests", "data", "md")
PSF, DCD = os.path.join(MD, "adk.psf"), os.path.join(MD, "adk_dims.dcd")
RADII_NM = {"H": 0.120, "C": 0.170, "N": 0.155, "O": 0.152, "S": 0.180}

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
traj = md.load_dcd(DCD, top=md.load_psf(PSF))
adk = orbitfield.load(PSF, DCD)
adk.frame(0)
for r in range(rounds):
    t0 = time.perf_counter()
    # One frame per call, as the reference is made (MDTraj 1.11 gives another total to a frame
    # computed in a batch).
    theirs = np.array([md.shrake_rupley(traj[i], probe_radius=0.14, n_sphere_points=960,
                                        change_radii=RADII_NM).sum() * 100.0 for i in range(traj.n_frames)])
    t1 = time.perf_counter()
    ours = adk.sasa("protein")
    t2 = time.perf_counter()
    print(f"round {r + 1}: {traj.n_frames} frames, MDTraj {t1 - t0:.2f} s, orbitfield {t2 - t1:.2f} s, "
          f"ratio {(t1 - t0) / (t2 - t1):.2f}, largest difference {np.abs(ours - theirs).max():.2f} A^2 "
          f"of {ours.mean():.0f}")
