"""Peer timing for `orbitfield bench --qm-esp`: PySCF's electrostatic potential on a cubegen lattice.

Usage: OMP_NUM_THREADS=1 python benches/pyscf_mep_peer.py assets/bench/threonine_hf_631gs_cart.molden [N]
Loads the Molden file with PySCF, builds the density matrix from its orbitals and occupations, and
times `pyscf.tools.cubegen.mep` on cubegen's default box (N^3 points, 3-bohr margin; default N = 20),
writing the cube to a temporary file. Best of 3. Prints one JSON line: points, wall and process CPU
seconds, PySCF version, basis functions.
"""
import json
import os
import sys
import tempfile
import time

import numpy as np
import pyscf
from pyscf import gto
from pyscf.tools import cubegen, molden


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    mol, _e, c, occ, _irrep, _spins = molden.load(path)
    if mol.cart:
        # cubegen.mep's point charges are one s function each; aux_e2 refuses a Cartesian molecule
        # beside a spherical "fake" molecule, so the fake molecule takes the molecule's convention
        # (the integrals are the same: an s function is s either way).
        make_fakemol = gto.fakemol_for_charges

        def fakemol_like_mol(coords, *args, **kwargs):
            fake = make_fakemol(coords, *args, **kwargs)
            fake.cart = True
            return fake

        gto.fakemol_for_charges = fakemol_like_mol
    if isinstance(c, tuple) or np.asarray(c).ndim == 3:
        dm = sum((ci * oi) @ ci.T for ci, oi in zip(c, occ))
    else:
        dm = (c * occ) @ c.T
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "mep.cube")
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            cubegen.mep(mol, out, dm, nx=n, ny=n, nz=n)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    print(
        json.dumps(
            {
                "points": n**3,
                "wall_s": min(walls),
                "cpu_s": min(cpus),
                "pyscf": pyscf.__version__,
                "basis_functions": int(mol.nao),
            }
        )
    )


if __name__ == "__main__":
    main()
