"""Peer timing for benches/mo_cpu.rs: PySCF's cubegen-style orbital evaluation.

Usage: OMP_NUM_THREADS=1 python benches/pyscf_cubegen_peer.py tests/data/engine/threonine_hf_631gs_cart.molden [N]
Loads the Molden file with PySCF, builds cubegen's default lattice (N^3 points, 3-bohr margin) and
times the evaluation of the HOMO exactly as `pyscf.tools.cubegen.orbital` does it (AO values in
blocks of 8000 points, then a dot with the coefficients), without the file writing; then the
density (cubegen.density's path: AOs, then the occupied-orbital contraction). Best of 5 runs.
"""
import sys
import time

import numpy as np
from pyscf import lib
from pyscf.tools import cubegen, molden


def best_of(f, n=5):
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    mol, mo_energy, mo_coeff, mo_occ, _, _ = molden.load(path)
    homo = int(np.nonzero(mo_occ > 0)[0][-1])
    coeff = mo_coeff[:, homo]
    cc = cubegen.Cube(mol, n, n, n)
    coords = cc.get_coords()
    ngrids = cc.get_ngrids()
    blksize = min(8000, ngrids)

    def orbital():
        out = np.empty(ngrids)
        for ip0, ip1 in lib.prange(0, ngrids, blksize):
            ao = mol.eval_gto("GTOval", coords[ip0:ip1])
            out[ip0:ip1] = np.dot(ao, coeff)
        return out

    occ = mo_occ[mo_occ > 0]
    c_occ = mo_coeff[:, mo_occ > 0]

    def density():
        out = np.empty(ngrids)
        for ip0, ip1 in lib.prange(0, ngrids, blksize):
            ao = mol.eval_gto("GTOval", coords[ip0:ip1])
            psi = ao @ c_occ
            out[ip0:ip1] = (psi * psi) @ occ
        return out

    print(f"{path}: {mol.natm} atoms, {mol.nao} basis functions, HOMO = orbital {homo + 1}, {n}^3 points")
    print(f"pyscf {__import__('pyscf').__version__} homo   best of 5: {best_of(orbital):.4f} s")
    print(f"pyscf {__import__('pyscf').__version__} density best of 5: {best_of(density):.4f} s")


if __name__ == "__main__":
    main()
