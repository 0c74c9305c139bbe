#!/usr/bin/env python3
"""Reference secondary structure for tests/dssp.rs.

For every structure (and every model or trajectory frame) below this writes

- the 8-state codes of mkdssp 4.2.2 (Debian 12 package `dssp`, run as
  `mkdssp --output-format dssp IN OUT`; 'P' polyproline with its default --min-pp-stretch 3), and
- the 3-state codes (H, E, -) of MDAnalysis 2.11 `MDAnalysis.analysis.dssp.DSSP` (no periodic box,
  hydrogens guessed),

aligned to the protein residues that MDAnalysis finds in the file (key "chain resid resname"; the
chain is the chain ID, or the segment ID where there is none). '?' marks a residue the program did not
assign (mkdssp skips residues without all of N, CA, C, O; MDAnalysis needs them too).

mkdssp reads the original file for single-model structures, one model at a time for NMR ensembles
(the PDB text of that model with the file's header), and, for the adk trajectory, each frame written
as PDB by MDAnalysis (coordinates rounded to 0.001 A, which the test repeats before comparing; CHARMM histidine names
HSD/HSE/HSP written as HIS, which mkdssp would otherwise drop as unknown compounds).

Run from anywhere (Python with numpy, MDAnalysis 2.11, MDAnalysisTests 2.11; mkdssp on PATH):
    python3 tests/data/dssp/make_reference.py
Writes tests/data/dssp/reference.json.
"""

import gzip
import json
import os
import subprocess
import tempfile
import warnings

import numpy as np
import MDAnalysis as mda
from MDAnalysis.analysis.dssp import DSSP

HERE = os.path.dirname(os.path.abspath(__file__))
MD = os.path.join(HERE, "..", "md")

# name, files (relative to this folder), what it is
CASES = [
    ("1a28", ["1a28.pdb.gz"], "X-ray, helix-rich (progesterone receptor ligand-binding domain, 2 chains)"),
    ("4gcnA", ["4gcnA.pdb.gz"], "X-ray chain, helix-rich"),
    ("3aqgA", ["3aqgA.pdb.gz"], "X-ray chain, strand-rich"),
    ("1ahsA", ["1ahsA.pdb.gz"], "X-ray chain, strand-rich"),
    ("1eteA", ["1eteA.pdb.gz"], "X-ray chain"),
    ("2qdlA", ["2qdlA.pdb.gz"], "X-ray chain"),
    ("3gwiA", ["3gwiA.pdb.gz"], "X-ray chain"),
    ("1mr1D", ["1mr1D.pdb.gz"], "X-ray chain"),
    ("3so6A", ["3so6A.pdb.gz"], "X-ray chain"),
    ("5PTI", ["5PTI.cif.gz"], "X-ray/neutron mmCIF with alternate locations (BPTI)"),
    ("3PWP", ["3PWP.pdb.gz"], "X-ray with alternate locations, 5 chains (TCR / HLA-A2 complex)"),
    ("1gya", ["1gya.pdb.gz"], "NMR ensemble, 18 models (CD2 adhesion domain)"),
    ("neopetrosiamide", [os.path.join(MD, "nmr_neopetrosiamide.pdb")], "NMR ensemble, 24 models"),
    ("adk", [os.path.join(MD, "adk.psf"), os.path.join(MD, "adk_dims.dcd")], "MD trajectory, 98 frames"),
]


HEADER = "HEADER    ORBITFIELD TEST INPUT\nCRYST1    1.000    1.000    1.000  90.00  90.00  90.00 P 1           1\n"


def rename_histidines(line):
    if line.startswith(("ATOM", "HETATM")) and line[17:20] in ("HSD", "HSE", "HSP"):
        return line[:17] + "HIS" + line[20:]
    return line


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return f.read()


def mkdssp(path):
    """Runs mkdssp on a file; returns {(chain, resnum, icode): code}."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.dssp")
        subprocess.run(["mkdssp", "--output-format", "dssp", path, out], check=True, capture_output=True)
        lines = open(out).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("  #  RESIDUE"))
    codes = {}
    for line in lines[start + 1 :]:
        if len(line) < 17 or line[13] == "!":
            continue
        key = (line[11], int(line[5:10]), line[10].strip())
        codes[key] = "-" if line[16] == " " else line[16]
    return codes


def pdb_models(text):
    """The PDB text of each model, each with the header lines before the first MODEL."""
    lines = text.splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("MODEL")), None)
    if first is None:
        return [text]
    header = [l for l in lines[:first] if not l.startswith(("ATOM", "HETATM"))]
    models, cur = [], None
    for l in lines[first:]:
        if l.startswith("MODEL"):
            cur = []
        elif l.startswith("ENDMDL"):
            models.append("\n".join(header + cur + ["END"]) + "\n")
            cur = None
        elif cur is not None and l.startswith(("ATOM", "HETATM", "TER")):
            cur.append(l)
    return models


def first_altloc(atoms):
    """Atoms without an alternate location or in the first one seen per residue and atom name."""
    if not hasattr(atoms, "altLocs"):
        return atoms
    keep, seen = [], set()
    for a in atoms:
        key = (a.residue.ix, a.name)
        if key in seen:
            continue
        seen.add(key)
        keep.append(a.ix)
    return atoms.universe.atoms[keep]


def label(res):
    chain = ""
    if hasattr(res.atoms, "chainIDs"):
        chain = str(res.atoms.chainIDs[0]).strip()
    return chain or str(res.segid).strip()


def icode(res):
    return str(getattr(res, "icode", "") or "").strip()


def main():
    out = {"mkdssp": "4.2.2", "mdanalysis": mda.__version__, "structures": []}
    for name, files, what in CASES:
        paths = [f if os.path.isabs(f) else os.path.join(HERE, f) for f in files]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            u = mda.Universe(*paths)
        protein = first_altloc(u.select_atoms("protein"))
        residues = protein.residues
        keys = [f"{label(r)} {r.resid} {r.resname}" for r in residues]
        # Residues with one each of N, CA, C and O (what both programs need).
        complete = []
        for r in residues:
            names = list(protein[protein.resindices == r.ix].names)
            if all(names.count(n) == 1 for n in ("N", "CA", "C")) and sum(names.count(n) for n in ("O", "O1", "OT1")) == 1:
                complete.append(r)
        sel = protein[np.isin(protein.resindices, [r.ix for r in complete])]
        n_frames = len(u.trajectory)
        u.dimensions = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mda_run = DSSP(sel).run()
        mda_index = {r.ix: k for k, r in enumerate(sel.residues)}
        mda_codes = []
        for f in range(n_frames):
            codes = ["?"] * len(residues)
            for k, r in enumerate(residues):
                if r.ix in mda_index:
                    codes[k] = str(mda_run.results.dssp[f][mda_index[r.ix]])
            mda_codes.append("".join(codes))

        # mkdssp, model by model.
        mk_codes = []
        if name == "adk":
            chain_of = {r.ix: "A" for r in residues}
            if not hasattr(u.atoms, "chainIDs"):
                u.add_TopologyAttr("chainIDs", ["A"] * len(u.atoms))
            for f in range(n_frames):
                u.trajectory[f]
                with tempfile.TemporaryDirectory() as tmp:
                    pdb = os.path.join(tmp, "frame.pdb")
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        prot = u.select_atoms("protein")
                        with mda.Writer(pdb, multiframe=False) as w:
                            w.write(prot)
                    # CHARMM histidine names are unknown to mkdssp, which would drop those residues.
                    text = HEADER + "".join(
                        rename_histidines(l) + "\n"
                        for l in open(pdb).read().splitlines()
                        if l.startswith(("ATOM", "HETATM", "TER", "END"))
                    )
                    open(pdb, "w").write(text)
                    mk_codes.append(mkdssp(pdb))
        else:
            chain_of = {r.ix: label(r) for r in residues}
            text = read_text(paths[0])
            with tempfile.TemporaryDirectory() as tmp:
                if paths[0].endswith((".cif", ".cif.gz")):
                    p = os.path.join(tmp, "in.cif")
                    open(p, "w").write(text)
                    mk_codes.append(mkdssp(p))
                else:
                    for k, model in enumerate(pdb_models(text)):
                        p = os.path.join(tmp, f"model{k}.pdb")
                        if not model.startswith("HEADER"):
                            # mkdssp takes a file for PDB only when it starts with HEADER.
                            model = HEADER + model
                        open(p, "w").write(model)
                        mk_codes.append(mkdssp(p))
        assert len(mk_codes) == n_frames, (name, len(mk_codes), n_frames)
        mk_aligned = []
        for codes in mk_codes:
            mk_aligned.append("".join(codes.get((chain_of[r.ix], int(r.resid), icode(r)), "?") for r in residues))
        out["structures"].append(
            {
                "name": name,
                "what": what,
                "files": [os.path.relpath(p, os.path.join(HERE, "..")) for p in paths],
                "frames": n_frames,
                "residues": keys,
                "mkdssp": mk_aligned,
                "mdanalysis": mda_codes,
            }
        )
        assigned = sum(c != "?" for c in mk_aligned[0])
        print(f"{name}: {len(residues)} residues, {n_frames} frame(s), mkdssp assigned {assigned} in frame 0")
    with open(os.path.join(HERE, "reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
