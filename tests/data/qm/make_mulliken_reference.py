"""Mulliken charges of the test Molden files, computed by PySCF (reference for tests/esp_cli.rs).

Run from this folder with PySCF 2.14 (`python make_mulliken_reference.py`); writes
mulliken_reference.json. PySCF reads each Molden file with its own reader (`pyscf.tools.molden.load`),
builds the density matrix from the occupations and calls `scf.hf.mulliken_pop` (meta-Lowdin is NOT
used): q_A = Z_A - sum_{mu on A} (P S)_{mu mu}, with Z_A the (effective) nuclear charge.
"""
import gzip
import json
import os
import tempfile

import numpy as np
from pyscf import scf
from pyscf.tools import molden

NAMES = [
    "water_hf_631gs_sph",
    "water_hf_631gs_cart",
    "threonine_hf_631gs_cart",
    "threonine_hf_631gs_sph",
    "o2_uhf_ccpvtz_sph",
]

out = {}
for name in NAMES:
    with gzip.open(f"{name}.molden.gz", "rb") as f:
        text = f.read()
    with tempfile.NamedTemporaryFile(suffix=".molden", delete=False) as tmp:
        tmp.write(text)
        path = tmp.name
    try:
        mol, mo_energy, mo_coeff, mo_occ, _irrep, _spins = molden.load(path)
    finally:
        os.remove(path)
    if isinstance(mo_coeff, tuple) or (np.asarray(mo_coeff).ndim == 3):
        dm = sum(c[:, o > 0] * o[o > 0] @ c[:, o > 0].T for c, o in zip(mo_coeff, mo_occ))
    else:
        c, o = np.asarray(mo_coeff), np.asarray(mo_occ)
        dm = (c[:, o > 0] * o[o > 0]) @ c[:, o > 0].T
    s = mol.intor_symmetric("int1e_ovlp")
    n_elec = float(np.einsum("ij,ji->", dm, s))
    _pop, charges = scf.hf.mulliken_pop(mol, dm, s, verbose=0)
    out[name] = {
        "n_electrons_tr_ps": round(n_elec, 10),
        "nuclear_charges": [float(z) for z in mol.atom_charges()],
        "mulliken_charges_e": [round(float(q), 10) for q in charges],
    }
    print(name, n_elec, charges.sum(), charges)

with open("mulliken_reference.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
