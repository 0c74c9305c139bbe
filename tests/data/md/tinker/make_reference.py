"""Reference values for the Tinker XYZ and archive reader, from MDAnalysis's TXYZ parser and reader.

Writes `reference.json` beside this script: per file the atom and frame counts, every atom's name
and type, the elements where MDAnalysis gives them (all names element symbols), every bond, and
every frame's box and positions. Run with MDAnalysis 2.11.0 from the repository root:

    python tests/data/md/tinker/make_reference.py
"""

import json
import pathlib
import warnings

import MDAnalysis as mda

warnings.filterwarnings("ignore")
HERE = pathlib.Path(__file__).resolve().parent
FILES = ["test.txyz", "test.arc", "new_hexane.arc"]


def case(name):
    u = mda.Universe(str(HERE / name), format="TXYZ" if name.endswith("txyz") else "ARC")
    out = {
        "n_atoms": u.atoms.n_atoms,
        "n_frames": u.trajectory.n_frames,
        "names": [str(x) for x in u.atoms.names],
        "types": [str(x) for x in u.atoms.types],
        "bonds": sorted([int(a), int(b)] for a, b in u.bonds.indices),
    }
    if hasattr(u.atoms, "elements"):
        out["elements"] = [str(x) for x in u.atoms.elements]
    frames = []
    for ts in u.trajectory:
        d = ts.dimensions
        frames.append(
            {
                "box": None if d is None else [round(float(x), 6) for x in d],
                "positions_angstrom": [[round(float(x), 6) for x in p] for p in ts.positions],
            }
        )
    out["frames"] = frames
    return out


def main():
    doc = {"mdanalysis_version": mda.__version__, "cases": {f: case(f) for f in FILES}}
    (HERE / "reference.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
