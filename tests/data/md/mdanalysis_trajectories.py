"""Writes mdanalysis_trajectories.json: reference values for the DCD and XTC readers.

Independent expectations from MDAnalysis 2.11.0 (run once; the JSON is committed):
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install MDAnalysis==2.11.0
    /tmp/venv/bin/python tests/data/md/mdanalysis_trajectories.py

For each trajectory: atom and frame counts, and for every frame the box (lengths in Angstrom,
angles in degrees, or null), time in ps and the positions (Angstrom) of a few atoms in a few frames.
"""

import glob
import json
import os

import MDAnalysis as mda

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [
    ("adk_dims", "adk.psf", "adk_dims.dcd"),
    ("tip125_tric_C36", "tip125_tric_C36.psf", "tip125_tric_C36.dcd"),
    ("adk_oplsaa", "adk_oplsaa.gro", "adk_oplsaa.xtc"),
    ("tip125_tric_C36_xtc", "tip125_tric_C36.psf", "tip125_tric_C36.xtc"),
]


def write_small_xtc():
    """tip125_tric_C36.xtc: the tip125 DCD rewritten by MDAnalysis' XTC writer (375 atoms, triclinic),
    a small XTC for the tests that damage files byte by byte."""
    u = mda.Universe(os.path.join(HERE, "tip125_tric_C36.psf"), os.path.join(HERE, "tip125_tric_C36.dcd"))
    with mda.Writer(os.path.join(HERE, "tip125_tric_C36.xtc"), n_atoms=len(u.atoms)) as w:
        for _ in u.trajectory:
            w.write(u.atoms)


def describe(topology, trajectory):
    u = mda.Universe(os.path.join(HERE, topology), os.path.join(HERE, trajectory))
    n_atoms = len(u.atoms)
    n_frames = len(u.trajectory)
    atoms = sorted({0, 1, n_atoms // 3, n_atoms // 2, n_atoms - 1})
    sample_frames = sorted({0, 1, n_frames // 2, n_frames - 1})
    frames = []
    for ts in u.trajectory:
        entry = {
            "frame": ts.frame,
            "time_ps": float(ts.time),
            "box": None
            if ts.dimensions is None
            else {
                "lengths_angstrom": [float(x) for x in ts.dimensions[:3]],
                "angles_degree": [float(x) for x in ts.dimensions[3:]],
            },
        }
        if ts.frame in sample_frames:
            entry["positions_angstrom"] = {str(i): [float(x) for x in ts.positions[i]] for i in atoms}
        frames.append(entry)
    return {
        "topology": topology,
        "trajectory": trajectory,
        "n_atoms": n_atoms,
        "n_frames": n_frames,
        "frames": frames,
    }


def main():
    write_small_xtc()
    out = {
        "generator": f"MDAnalysis {mda.__version__}",
        "cases": {name: describe(top, traj) for name, top, traj in CASES},
    }
    with open(os.path.join(HERE, "mdanalysis_trajectories.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    # MDAnalysis caches XTC frame offsets beside the file; they are not test data.
    for cache in glob.glob(os.path.join(HERE, ".*_offsets.*")):
        os.remove(cache)


if __name__ == "__main__":
    main()
