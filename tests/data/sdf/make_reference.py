"""RDKit's reading of the SD files in this folder (and IOData's, for the V2000 ones): for every
record, its title, atomic numbers, positions (Angstrom), bonds (0-based atom pairs) and the orders
of the bonds that are not single (pair and RDKit's order as read, sanitize off: 2, 3, 1.5 aromatic). Run from the
repository root: python tests/data/sdf/make_reference.py"""
import json
import pathlib

import iodata
import rdkit
import rdkit.Chem.rdDistGeom
from iodata.utils import angstrom
from rdkit import Chem

here = pathlib.Path(__file__).parent
# Three conformers of alanine (ETKDG, fixed seed): one molecule, three records, for the frames.
ala = Chem.AddHs(Chem.MolFromSmiles("C[C@@H](C(=O)O)N"))
ids = Chem.rdDistGeom.EmbedMultipleConfs(ala, numConfs=3, randomSeed=33)
if not (here / "conformers.sdf").exists():
    with Chem.SDWriter(str(here / "conformers.sdf")) as w:
        for i in ids:
            ala.SetProp("_Name", f"alanine conformer {i}")
            w.write(ala, confId=i)
out = {"rdkit": rdkit.__version__, "iodata": iodata.__version__, "files": {}}
for name in ["example.sdf", "molv3000.sdf", "formamide.sdf", "molecule.sdf", "conformers.sdf"]:
    records = []
    supplier = Chem.SDMolSupplier(str(here / name), sanitize=False, removeHs=False, strictParsing=False)
    for mol in supplier:
        conf = mol.GetConformer()
        records.append(
            {
                "title": mol.GetProp("_Name"),
                "atnums": [a.GetAtomicNum() for a in mol.GetAtoms()],
                "positions": [[round(float(v), 6) for v in conf.GetAtomPosition(i)] for i in range(mol.GetNumAtoms())],
                "bonds": sorted(sorted([b.GetBeginAtomIdx(), b.GetEndAtomIdx()]) for b in mol.GetBonds()),
                "multiple_bonds": sorted(
                    sorted([b.GetBeginAtomIdx(), b.GetEndAtomIdx()]) + [b.GetBondTypeAsDouble()]
                    for b in mol.GetBonds()
                    if b.GetBondTypeAsDouble() != 1.0
                ),
            }
        )
    try:
        for r, mol in zip(records, iodata.load_many(str(here / name)), strict=True):
            assert r["atnums"] == [int(z) for z in mol.atnums], name
            pos = [[float(v) / angstrom for v in p] for p in mol.atcoords]
            assert max(abs(a - b) for p, q in zip(pos, r["positions"]) for a, b in zip(p, q)) < 1e-5, name
            assert r["bonds"] == sorted(sorted([int(b[0]), int(b[1])]) for b in mol.bonds), name
        agrees = "iodata agrees"
    except iodata.utils.LoadError as e:
        agrees = f"iodata cannot read it: {e}"
    print(name, len(records), "records;", agrees)
    out["files"][name] = records
(here / "reference.json").write_text(json.dumps(out, indent=1) + "\n")
