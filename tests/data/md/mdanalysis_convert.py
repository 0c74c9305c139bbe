"""Reference values for `orbitfield convert`: what MDAnalysis reads from the files it writes.

Runs `orbitfield convert` on tip125_tric_C36.psf + .dcd (the 125 water oxygens, frames 1, 5 and 9:
`--sel "name OH2" --frames 1:10:4`) into every output format (pdb, gro, xyz, dcd, xtc, trr, nc; GRO
one frame, as MDAnalysis reads one), reads each file back with MDAnalysis (trajectory formats with
the PDB that `convert` writes of the same atoms as topology) and writes
`mdanalysis_convert.json` beside this script: per format the positions (Angstrom, 5 decimals) and
the box (a, b, c, alpha, beta, gamma) of every frame, and under "source" the same atoms and frames
as MDAnalysis reads them from the PSF + DCD. Run with MDAnalysis 2.11.0 from the repository root,
after building the command line:

    cargo build --no-default-features
    python tests/data/md/mdanalysis_convert.py [path/to/orbitfield]
"""

import json
import pathlib
import subprocess
import sys
import tempfile
import warnings

import MDAnalysis as mda

warnings.filterwarnings("ignore")
HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SOURCE = [HERE / "tip125_tric_C36.psf", HERE / "tip125_tric_C36.dcd"]
SEL = "name OH2"
FRAMES = "1:10:4"
FORMATS = ["pdb", "gro", "xyz", "dcd", "xtc", "trr", "nc"]


def convert(exe, out, frames):
    cmd = [str(exe), "convert", *map(str, SOURCE), "-o", str(out), "--sel", SEL, "--frames", frames]
    subprocess.run(cmd, check=True, capture_output=True)


def read(u):
    pos, boxes = [], []
    for ts in u.trajectory:
        pos.append([[round(float(x), 5) for x in p] for p in u.atoms.positions])
        boxes.append(None if ts.dimensions is None else [round(float(x), 6) for x in ts.dimensions])
    return {"positions": pos, "box": boxes}


def main():
    exe = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "debug" / "orbitfield"
    out = {
        "mdanalysis": mda.__version__,
        "command": f"orbitfield convert tip125_tric_C36.psf tip125_tric_C36.dcd --sel '{SEL}' --frames {FRAMES}",
        "frames": [1, 5, 9],
    }
    src = mda.Universe(*map(str, SOURCE))
    atoms = src.select_atoms(SEL)
    pos, boxes = [], []
    for ts in src.trajectory[1:10:4]:
        pos.append([[round(float(x), 5) for x in p] for p in atoms.positions])
        boxes.append([round(float(x), 6) for x in ts.dimensions])
    out["source"] = {"positions": pos, "box": boxes}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        top = tmp / "top.pdb"
        convert(exe, top, "1:2")
        for ext in FORMATS:
            path = tmp / f"out.{ext}"
            convert(exe, path, "1:2" if ext == "gro" else FRAMES)
            if ext in ("dcd", "xtc", "trr", "nc"):
                u = mda.Universe(str(top), str(path))
            else:
                u = mda.Universe(str(path))
            out[ext] = read(u)
    (HERE / "mdanalysis_convert.json").write_text(json.dumps(out, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
