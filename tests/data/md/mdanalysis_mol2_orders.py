"""MDAnalysis 2.11's reading of the bond types of the mol2 files here (an independent reader), for
`tests/io_bond_orders.rs`: per file, the bonds whose type is not single, as (0-based atom, atom,
type as written: "2", "3", "ar", ...), "1" and "am" (amide, drawn single) left out.
Run from the repository root: python tests/data/md/mdanalysis_mol2_orders.py"""
import json
import pathlib

import MDAnalysis as mda

here = pathlib.Path(__file__).parent
out = {"mdanalysis": mda.__version__, "files": {}}
for name in ["zinc_856218.mol2", "Molecule.mol2"]:
    u = mda.Universe(str(here / name))
    rows = []
    for b in u.bonds:
        i, j = sorted(int(a.index) for a in b.atoms)
        if str(b.order) not in ("1", "am"):
            rows.append([i, j, str(b.order)])
    out["files"][name] = {"n_bonds": len(u.bonds), "multiple_bonds": sorted(rows)}
(here / "mdanalysis_mol2_orders.json").write_text(json.dumps(out, indent=1) + "\n")
print({k: len(v["multiple_bonds"]) for k, v in out["files"].items()})
