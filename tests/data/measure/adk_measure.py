"""Independent reference values for the measurement journey (tests/journey_measure.rs).

Reads adk.psf + adk_dims.dcd (tests/data/md) with MDAnalysis (2.11.0) and writes
adk_measure.json: for every frame, the distance between two C-alpha atoms (Angstrom) and the
backbone phi dihedral of one residue (degree, IUPAC sign, -180..180), computed with
MDAnalysis.lib.distances (calc_bonds, calc_dihedrals), and each frame's time (ps) as MDAnalysis
reads it. Atom indices in the JSON are 0-based.

    python3 -m venv venv && venv/bin/pip install MDAnalysis==2.11.0
    venv/bin/python tests/data/measure/adk_measure.py
"""

import json
import os
import warnings

import MDAnalysis as mda
from MDAnalysis.lib.distances import calc_bonds, calc_dihedrals

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "md")


def one(u, text):
    group = u.select_atoms(text)
    assert len(group) == 1, (text, len(group))
    return int(group[0].index)


def main():
    u = mda.Universe(os.path.join(MD, "adk.psf"), os.path.join(MD, "adk_dims.dcd"))
    # The NMP domain's and the LID domain's hinge C-alphas move apart as adk opens.
    distance_atoms = [one(u, "resid 55 and name CA"), one(u, "resid 169 and name CA")]
    # Backbone phi of residue 150: C(149) - N(150) - CA(150) - C(150).
    dihedral_atoms = [
        one(u, "resid 149 and name C"),
        one(u, "resid 150 and name N"),
        one(u, "resid 150 and name CA"),
        one(u, "resid 150 and name C"),
    ]
    distances, dihedrals, times = [], [], []
    for ts in u.trajectory:
        p = u.atoms.positions.astype("float64")
        d = calc_bonds(p[[distance_atoms[0]]], p[[distance_atoms[1]]])[0]
        a, b, c, e = (p[[i]] for i in dihedral_atoms)
        phi = calc_dihedrals(a, b, c, e)[0]
        distances.append(round(float(d), 5))
        dihedrals.append(round(float(phi) * 180.0 / 3.141592653589793, 4))
        times.append(round(float(ts.time), 5))
    out = {
        "source": "MDAnalysis " + mda.__version__ + " (lib.distances.calc_bonds, calc_dihedrals)",
        "n_frames": len(u.trajectory),
        "time_ps": times,
        "distance": {"atoms": distance_atoms, "unit": "angstrom", "values": distances},
        "dihedral": {"atoms": dihedral_atoms, "unit": "degree", "values": dihedrals},
    }
    with open(os.path.join(HERE, "adk_measure.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
