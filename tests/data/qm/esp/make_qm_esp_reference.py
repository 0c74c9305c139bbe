"""Electrostatic potential of PySCF wavefunctions at points (reference for tests/qm_esp.rs).

Run from this folder with PySCF 2.14 (`python make_qm_esp_reference.py`); writes NAME.esp.txt.gz for
each Molden file of ../ (the project's copies of the shared PySCF wavefunctions).

For each file PySCF reads the Molden file with its own reader (`pyscf.tools.molden.load`) and builds
the density matrix from the file's orbitals and occupations: P = sum_i n_i C_i C_i^T (restricted,
n_i = 0..2), P = P_alpha + P_beta (unrestricted). Before use the orbitals are checked against the
basis: C^T S C = 1 for the occupied orbitals, and tr(P S) = the electron count of the occupations.

The potential is V(r) = sum_A Z_A / |r - R_A| - sum_mn P_mn <m| 1/|r - r'| |n>, in hartree/e, with the
electronic integrals computed exactly as `pyscf.tools.cubegen.mep` does (`df.incore.aux_e2` with
`gto.fakemol_for_charges`); a second route (`int1e_rinv` under `mol.with_rinv_origin`) is evaluated
on the first 40 points and must agree to 1e-10.

Points (seeded, reproducible): 240 uniform in the molecule's box padded by 3 Angstrom and 60 on
shells 1.0 to 1.6 Angstrom from random nuclei, all at least 1 Angstrom from every nucleus. The header
also carries the dipole moment (atomic units, nuclei plus electrons, `scf.hf.dip_moment`) and the
nuclear charges.

A second file, NAME.esp_lattice.txt.gz, holds the potential at every point of a small slanted
lattice (12 x 11 x 10 points over the molecule's box padded by 2 Angstrom, the third axis tilted),
so that lattice engines (CPU and GPU) are compared with PySCF at exactly their own points; the test
skips the points closer than 1 Angstrom to a nucleus.
"""
import gzip
import os
import tempfile

import numpy as np
from pyscf import df, gto, scf
from pyscf.tools import molden

NAMES = [
    "water_hf_631gs_sph",
    "water_hf_631gs_cart",
    "threonine_hf_631gs_sph",
    "threonine_hf_631gs_cart",
    "n2_hf_ccpvqz_sph",
    "n2_hf_ccpvqz_cart",
    "o2_uhf_ccpvtz_sph",
]
ANGSTROM = 1.0 / 0.52917721092  # bohr per Angstrom (PySCF's value)
BOHR = 1.0 / ANGSTROM


def load(name):
    with gzip.open(os.path.join("..", f"{name}.molden.gz"), "rb") as f:
        text = f.read()
    with tempfile.NamedTemporaryFile(suffix=".molden", delete=False) as tmp:
        tmp.write(text)
        path = tmp.name
    try:
        return molden.load(path)
    finally:
        os.remove(path)


def density(mol, mo_coeff, mo_occ):
    s = mol.intor_symmetric("int1e_ovlp")
    if isinstance(mo_coeff, tuple) or np.asarray(mo_coeff).ndim == 3:
        sets = list(zip(mo_coeff, mo_occ))
        how = "unrestricted: P = P_alpha + P_beta from the file's alpha and beta orbitals"
    else:
        sets = [(np.asarray(mo_coeff), np.asarray(mo_occ))]
        how = "restricted: P = sum_i n_i C_i C_i^T from the file's orbitals (n_i = 0..2)"
    dm = np.zeros((mol.nao, mol.nao))
    n_occ = 0.0
    worst = 0.0
    for c, o in sets:
        occ = o > 0
        co = c[:, occ]
        worst = max(worst, np.abs(co.T @ s @ co - np.eye(co.shape[1])).max())
        dm += (co * o[occ]) @ co.T
        n_occ += o.sum()
    n_elec = float(np.einsum("ij,ji->", dm, s))
    assert worst < 1e-8, f"occupied orbitals not orthonormal: {worst}"
    assert abs(n_elec - n_occ) < 1e-8, (n_elec, n_occ)
    return dm, how, worst, n_elec


def points(mol, rng):
    coords = mol.atom_coords()  # bohr
    lo = coords.min(axis=0) - 3.0 * ANGSTROM
    hi = coords.max(axis=0) + 3.0 * ANGSTROM
    min_r = 1.0 * ANGSTROM
    out = []

    def ok(p):
        return np.linalg.norm(coords - p, axis=1).min() >= min_r

    while len(out) < 240:
        p = lo + rng.random(3) * (hi - lo)
        if ok(p):
            out.append(p)
    while len(out) < 300:
        a = coords[rng.integers(len(coords))]
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        p = a + d * (1.0 + 0.6 * rng.random()) * ANGSTROM
        if ok(p):
            out.append(p)
    return np.array(out)


def potential(mol, dm, pts):
    z = mol.atom_charges()
    r = mol.atom_coords()
    v_nuc = np.array([np.sum(z / np.linalg.norm(r - p, axis=1)) for p in pts])
    fakemol = gto.fakemol_for_charges(pts)
    fakemol.cart = mol.cart  # one s function per point either way; aux_e2 wants matching conventions
    ints = df.incore.aux_e2(mol, fakemol)
    v_ele = np.einsum("ijp,ij->p", ints, dm)
    # Second route on a few points: one-electron 1/|r - C| integrals.
    for k, p in enumerate(pts[:40]):
        with mol.with_rinv_origin(p):
            rinv = mol.intor("int1e_rinv")
        alt = np.einsum("ij,ij->", rinv, dm)
        assert abs(alt - v_ele[k]) < 1e-10 * max(1.0, abs(alt)), (k, alt, v_ele[k])
    return v_nuc - v_ele


def write_points(path, header, pts, v):
    """Writes `header` lines, then one line `x y z V` per point (Angstrom, hartree/e), gzipped."""
    lines = list(header)
    for p, val in zip(pts, v):
        a = p * BOHR
        lines.append(f"{a[0]:.10f} {a[1]:.10f} {a[2]:.10f} {val:.15e}")
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())


def write_lattice(name, mol, dm):
    coords = mol.atom_coords()
    lo = coords.min(axis=0) - 2.0 * ANGSTROM
    hi = coords.max(axis=0) + 2.0 * ANGSTROM
    dims = (12, 11, 10)
    s = (hi - lo) / (np.array(dims) - 1)
    steps = np.array([[s[0], 0.0, 0.0], [0.0, s[1], 0.0], [0.1 * s[2], -0.05 * s[2], s[2]]])
    pts = np.array(
        [lo + i * steps[0] + j * steps[1] + k * steps[2] for k in range(dims[2]) for j in range(dims[1]) for i in range(dims[0])]
    )
    v = potential(mol, dm, pts)
    lines = [
        f"# {name}: electrostatic potential (hartree/e) on a lattice, PySCF 2.14 (cubegen.mep's integrals)",
        "# origin_bohr: " + " ".join(repr(float(x)) for x in lo),
        "# steps_bohr: " + " ".join(repr(float(x)) for x in steps.ravel()),
        "# dims: " + " ".join(str(d) for d in dims),
        "# values: x fastest, then y, then z",
    ]
    lines += [f"{x:.15e}" for x in v]
    with gzip.GzipFile(f"{name}.esp_lattice.txt.gz", "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())


def main():
    for name in NAMES:
        mol, _e, mo_coeff, mo_occ, _irrep, _spins = load(name)
        dm, how, worst, n_elec = density(mol, mo_coeff, mo_occ)
        rng = np.random.default_rng(sum(map(ord, name)))
        pts = points(mol, rng)
        v = potential(mol, dm, pts)
        dip = scf.hf.dip_moment(mol, dm, unit="AU", verbose=0)
        lines = [
            f"# {name}: electrostatic potential of the SCF density and nuclei, PySCF 2.14 (cubegen.mep's integrals)",
            f"# basis functions {mol.nao}, {'Cartesian' if mol.cart else 'spherical'}, {mol.natm} atoms",
            f"# density: {how}; occupied orbitals orthonormal to {worst:.1e}; tr(PS) = {n_elec:.10f}",
            "# nuclear_charges: " + " ".join(f"{q:g}" for q in mol.atom_charges()),
            "# dipole_au: " + " ".join(f"{x:.12e}" for x in dip),
            "# points at least 1 Angstrom from every nucleus",
            "# columns: x y z (Angstrom) V (hartree/e)",
        ]
        write_points(f"{name}.esp.txt.gz", lines, pts, v)
        write_lattice(name, mol, dm)
        print(name, mol.nao, n_elec, dip, v.min(), v.max(), np.abs(v).min())


if __name__ == "__main__":
    main()
