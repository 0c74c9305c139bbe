"""MDAnalysis's reading of 1osm.pdb.gz's insertion codes: the residue count, every residue's number
and insertion code, and the atoms `resid NA` selects for each residue with an insertion code. Run
from the repository root: python tests/data/md/icodes/make_reference.py"""
import json
import pathlib
import warnings

import MDAnalysis as mda

warnings.simplefilter("ignore")
here = pathlib.Path(__file__).parent
u = mda.Universe(str(here.parent / "1osm.pdb.gz"))
coded = {}
for r in u.residues:
    if r.icode:
        sel = f"resid {r.resid}{r.icode}"
        coded[sel] = [int(i) for i in u.select_atoms(sel).indices]
out = {
    "mdanalysis": mda.__version__,
    "residues": len(u.residues),
    "resids": [f"{r.resid}{r.icode}" for r in u.residues],
    "selections": coded,
}
(here / "reference.json").write_text(json.dumps(out) + "\n")

# The same structure as mmCIF (pdbx_PDB_ins_code), written by gemmi.
import gzip  # noqa: E402

import gemmi  # noqa: E402

st = gemmi.read_structure(str(here.parent / "1osm.pdb.gz"))
doc = st.make_mmcif_document()
with gzip.open(here / "1osm.cif.gz", "wt") as f:
    f.write(doc.as_string())
