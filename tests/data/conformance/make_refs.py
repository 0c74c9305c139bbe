"""Reference values for the wavefunction conformance corpus (tests/conformance.rs).

Run in this folder with the project's Python environment (numpy, scipy, iodata 1.0.1, gbasis 1.0.0,
pyscf 2.14):

    python make_refs.py              # every file of manifest.json
    python make_refs.py NAME...      # only these corpus files

For every corpus file listed in manifest.json it writes refs/NAME.ref.txt.gz: points (x y z in
Angstrom) and values in atomic units of

  - orbitals (HOMO and LUMO of each spin) and the total and spin densities, evaluated by iodata
    (reading the file, with its own per-program corrections) and gbasis (evaluating the basis), and
  - `rerun_density` / `rerun_spin_density`: the density of a PySCF SCF rerun in the file's basis at
    the file's geometry, for files whose method PySCF reproduces (manifest key "rerun"). Densities do
    not depend on how degenerate orbitals are mixed, so they check a file independently of its
    orbitals' conventions.

Neither evaluator shares code with orbitfield. Each evaluation is checked before it is written:
the occupied orbitals that iodata reads must be orthonormal under iodata's overlap matrix to 1e-6
(files whose printed precision is coarser say so in the manifest, key "orthonormality"), and a
rerun's density must agree with the iodata density within 1e-5 (relative 2-norm) where both exist.
A file that iodata reads wrongly or not at all has manifest key "iodata": false and is checked
against the rerun only.

Closed-shell files written as alpha orbitals with occupations per spin (Q-Chem: every occupation
1, their sum half the electron count, no beta orbitals) have their occupations doubled here, as a
chemist reads them.
"""
import gzip
import json
import os
import sys
import tempfile
import warnings

import attrs
import numpy as np

warnings.simplefilter("ignore")

from gbasis.evals.eval import evaluate_basis  # noqa: E402
from gbasis.wrappers import from_iodata  # noqa: E402
from iodata import load_one  # noqa: E402
from iodata.overlap import compute_overlap  # noqa: E402

ANGSTROM = 1.0 / 0.52917721092  # bohr per Angstrom (as iodata and PySCF use)
HERE = os.path.dirname(os.path.abspath(__file__))


def read_text(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("latin-1")


def points_for(atcoords_bohr, seed):
    """300 points uniform in the molecule's box padded by 2.5 A, and 8 points within 0.2-1.2 A of
    each of the first 12 atoms (bohr)."""
    rng = np.random.default_rng(seed)
    lo = atcoords_bohr.min(axis=0) - 2.5 * ANGSTROM
    hi = atcoords_bohr.max(axis=0) + 2.5 * ANGSTROM
    pts = [lo + (hi - lo) * rng.random((300, 3))]
    for a in atcoords_bohr[:12]:
        d = rng.normal(size=(8, 3))
        d /= np.linalg.norm(d, axis=1)[:, None]
        r = (0.2 + rng.random(8) * 1.0) * ANGSTROM
        pts.append(a + d * r[:, None])
    return np.vstack(pts)


def load_iodata(path, fmt):
    text = read_text(path)
    with tempfile.NamedTemporaryFile("w", suffix="." + fmt, delete=False) as f:
        f.write(text)
        tmp = f.name
    try:
        return load_one(tmp, fmt={"molden": "molden", "fchk": "fchk", "mkl": "molekel"}[fmt])
    finally:
        os.unlink(tmp)


def orbital_sets(mol):
    """[(spin label, coefficients (nbasis, norb), occupations)] with occupations per spin."""
    mo = mol.mo
    if mo.kind == "restricted":
        return [("alpha", mo.coeffs, mo.occsa), ("beta", mo.coeffs, mo.occsb)]
    return [("alpha", mo.coeffsa, mo.occsa), ("beta", mo.coeffsb, mo.occsb)]


def orthonormality(mol):
    s = compute_overlap(mol.obasis, mol.atcoords)
    worst = 0.0
    for _, c, occ in orbital_sets(mol):
        idx = np.where(occ > 0)[0]
        if len(idx) == 0:
            continue
        m = c[:, idx].T @ s @ c[:, idx]
        worst = max(worst, float(np.abs(m - np.eye(len(idx))).max()))
    return worst


def without_zero_primitives(mol):
    """A copy of `mol` whose shells leave out primitives with only zero coefficients: gbasis 1.0.0
    evaluates a contraction with an exactly zero coefficient as zero everywhere (files that expand
    general contractions, such as CFOUR's, have many)."""
    import copy

    from iodata.basis import MolecularBasis

    shells = []
    for sh in mol.obasis.shells:
        keep = np.any(sh.coeffs != 0.0, axis=1)
        shells.append(attrs.evolve(sh, exponents=sh.exponents[keep], coeffs=sh.coeffs[keep]))
    clean = copy.copy(mol)
    clean.obasis = MolecularBasis(shells, mol.obasis.conventions, mol.obasis.primitive_normalization)
    return clean


def iodata_columns(mol, pts):
    ao = evaluate_basis(from_iodata(without_zero_primitives(mol)), pts)  # (nbasis, npoints), iodata's order
    cols = []
    total = np.zeros(len(pts))
    spin = np.zeros(len(pts))
    restricted = mol.mo.kind == "restricted"
    for label, c, occ in orbital_sets(mol):
        phi = c.T @ ao
        dens = (occ[:, None] * phi**2).sum(axis=0)
        total += dens
        spin += dens if label == "alpha" else -dens
        if restricted and label == "beta":
            continue
        occupied = np.where(occ > 0)[0]
        homo = int(occupied.max())
        prefix = "" if restricted else label + "_"
        cols.append((f"{prefix}homo({label},mo_index_1based={homo + 1})", phi[homo]))
        if homo + 1 < c.shape[1]:
            cols.append((f"{prefix}lumo({label},mo_index_1based={homo + 2})", phi[homo + 1]))
    cols.append(("total_density", total))
    if np.abs(spin).max() > 1e-12 or not restricted or not np.allclose(mol.mo.occsa, mol.mo.occsb):
        cols.append(("spin_density", spin))
    return cols


def double_if_per_spin(mol, log):
    """Closed-shell files whose alpha occupations sum to half the electron count: doubled."""
    mo = mol.mo
    if mo.kind != "restricted" or not np.allclose(mo.occsb, 0.0):
        return
    # The file gives no charge (iodata derives one from the occupations): neutral molecule.
    electrons = float(np.sum(mol.atcorenums))
    if abs(2.0 * mo.occsa.sum() - electrons) < 1e-6:
        mo.occs = 2.0 * mo.occsa
        log.append("occupations per spin doubled (closed shell written as alpha orbitals)")


def molden_atoms(path):
    """(atomic numbers, positions in bohr) of a Molden file's [Atoms] section, for files iodata cannot
    read (a minimal parser: name, index, Z, x, y, z; AU or Angs)."""
    atnums, coords, scale, inside = [], [], None, False
    for line in read_text(path).splitlines():
        t = line.strip()
        if t.startswith("["):
            if inside:
                break
            if t.lower().startswith("[atoms]"):
                inside = True
                scale = 1.0 if "au" in t.lower() else ANGSTROM
            continue
        if inside and t:
            w = t.split()
            atnums.append(int(w[2]))
            coords.append([float(x) * scale for x in w[3:6]])
    return np.array(atnums), np.array(coords)


def named_basis_mole(atnums, atcoords, rerun):
    """A PySCF molecule in a basis named by the manifest (the file's program used that library
    basis), at the file's geometry."""
    from pyscf import gto
    from iodata.periodic import num2sym

    return gto.M(
        atom=[(num2sym[int(z)], tuple(x)) for z, x in zip(atnums, atcoords)],
        unit="Bohr",
        basis=rerun["basis"],
        charge=rerun.get("charge", 0),
        spin=rerun.get("spin", 0),
        cart=rerun.get("cart", False),
        verbose=0,
    )


def pyscf_mole(mol, entry):
    """A PySCF molecule with the file's basis (iodata's reading of it) at the file's geometry."""
    from pyscf import gto

    if "basis" in entry["rerun"]:
        return named_basis_mole(mol.atnums, mol.atcoords, entry["rerun"])

    kinds = {(a >= 2, k) for sh in mol.obasis.shells for a, k in zip(sh.angmoms, sh.kinds)}
    pure = {k for (big, k) in kinds if big}
    if len(pure) > 1:
        raise ValueError("mixed Cartesian and pure shells: PySCF cannot rerun")
    atoms, basis = [], {}
    for i, (z, xyz) in enumerate(zip(mol.atnums, mol.atcoords)):
        from iodata.periodic import num2sym

        label = f"{num2sym[int(z)]}{i + 1}"
        atoms.append((label, tuple(xyz)))
        basis[label] = []
    for sh in mol.obasis.shells:
        label = atoms[sh.icenter][0]
        for k, angmom in enumerate(sh.angmoms):  # SP shells hold two contractions
            basis[label].append([int(angmom)] + [[float(e), float(c)] for e, c in zip(sh.exponents, sh.coeffs[:, k])])
    rerun = entry["rerun"]
    pm = gto.M(
        atom=atoms,
        unit="Bohr",
        basis=basis,
        charge=rerun.get("charge", 0),
        spin=rerun.get("spin", 0),
        cart=(pure == {"c"}),
        verbose=0,
    )
    if rerun.get("ecp"):
        raise ValueError("ECP reruns are not set up")
    return pm


def scf_run(pm, method, guess):
    from pyscf import dft, scf

    if method == "RHF":
        mf = scf.RHF(pm)
    elif method == "UHF":
        mf = scf.UHF(pm)
    elif method == "ROHF":
        mf = scf.ROHF(pm)
    else:
        mf = dft.RKS(pm) if method.startswith("R") else dft.UKS(pm)
        mf.xc = method[1:]
    mf.conv_tol = 1e-11
    mf.conv_tol_grad = 1e-7
    mf.max_cycle = 200
    mf.init_guess = guess
    mf.kernel()
    if method in ("UHF", "ROHF") or method.startswith("U"):
        # Open shells: follow instabilities down to a minimum.
        for _ in range(3):
            mo1 = mf.stability()[0]
            if mo1 is mf.mo_coeff:
                break
            mf.kernel(mf.make_rdm1(mo1, mf.mo_occ))
    if not mf.converged:
        mf = scf.newton(mf)
        mf.kernel()
    return mf


def pyscf_rerun(mol, entry, pts, log):
    """Densities of a PySCF rerun. Open shells may converge to another state than the file's
    program reached: where the manifest gives the program's printed energy, initial guesses are
    tried until the rerun reaches that energy (1e-6 hartree)."""
    pm = pyscf_mole(mol, entry)
    method = entry["rerun"]["method"]
    target = entry.get("energy_hartree")
    guesses = ["minao", "atom", "huckel", "1e", "vsap"] if target is not None else ["minao"]
    tried = []
    for guess in guesses:
        mf = scf_run(pm, method, guess)
        tried.append(f"{guess}: {mf.e_tot:.8f}")
        if target is None or abs(mf.e_tot - target) < 1e-6:
            break
    else:
        raise SystemExit(f"no rerun reached the program's energy {target:.8f} ({'; '.join(tried)})")
    log.append(f"PySCF rerun: {method}, E = {mf.e_tot:.10f} hartree, converged = {mf.converged}")
    ao = pm.eval_gto("GTOval", pts)
    dm = mf.make_rdm1()
    if dm.ndim == 3:
        da = np.einsum("pi,ij,pj->p", ao, dm[0], ao)
        db = np.einsum("pi,ij,pj->p", ao, dm[1], ao)
        return [("rerun_density", da + db), ("rerun_spin_density", da - db)], mf.e_tot
    return [("rerun_density", np.einsum("pi,ij,pj->p", ao, dm, ao))], mf.e_tot


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def make(entry):
    name = entry["file"]
    path = os.path.join(HERE, "files", name)
    log = []
    if entry.get("iodata", True):
        mol = load_iodata(path, entry["format"])
    else:
        from types import SimpleNamespace

        atnums, atcoords = molden_atoms(path)
        mol = SimpleNamespace(atnums=atnums, atcoords=atcoords)
    if entry.get("iodata", True):
        double_if_per_spin(mol, log)
        dev = orthonormality(mol)
        limit = entry.get("orthonormality", 1e-6)
        log.append(f"iodata: occupied orbitals orthonormal to {dev:.1e}")
        if dev > limit:
            raise SystemExit(f"{name}: iodata's orbitals deviate by {dev:.2e} > {limit:g}")
    pts = points_for(mol.atcoords, seed=sum(map(ord, name)))
    cols = iodata_columns(mol, pts) if entry.get("iodata", True) else []
    if "rerun" in entry:
        rcols, energy = pyscf_rerun(mol, entry, pts, log)
        if "energy_hartree" in entry:
            log.append(f"the file's program printed E = {entry['energy_hartree']:.10f} hartree "
                       f"(difference {energy - entry['energy_hartree']:.1e})")
        by = dict(cols)
        for rname, rv in rcols:
            mine = by.get({"rerun_density": "total_density"}.get(rname, rname.replace("rerun_", "")))
            if mine is not None:
                d = rel(rv, mine) if np.linalg.norm(mine) > 0 else 0.0
                log.append(f"{rname} vs iodata: {d:.1e}")
                if d > 1e-5:
                    raise SystemExit(f"{name}: the PySCF rerun and iodata disagree by {d:.2e}")
        cols += rcols
    if not cols:
        raise SystemExit(f"{name}: no reference columns")
    out = os.path.join(HERE, "refs", name.removesuffix(".gz") + ".ref.txt.gz")
    lines = [f"# references for {name}: iodata 1.0.1 + gbasis 1.0.0 and PySCF 2.14 (make_refs.py)"]
    lines += [f"# {m}" for m in log]
    lines.append("# columns: x y z (Angstrom) " + " ".join(c for c, _ in cols) + " (atomic units)")
    for k, p in enumerate(pts):
        vals = [p[0] / ANGSTROM, p[1] / ANGSTROM, p[2] / ANGSTROM] + [v[k] for _, v in cols]
        lines.append(" ".join(f"{v:.10e}" for v in vals))
    data = ("\n".join(lines) + "\n").encode()
    with open(out + ".tmp", "wb") as f:
        f.write(gzip.compress(data, mtime=0))
    os.replace(out + ".tmp", out)
    print(f"{name}: " + "; ".join(log))


def main():
    manifest = json.load(open(os.path.join(HERE, "manifest.json")))
    os.makedirs(os.path.join(HERE, "refs"), exist_ok=True)
    only = set(sys.argv[1:])
    failed = []
    for entry in manifest["files"]:
        if not only or entry["file"] in only:
            try:
                make(entry)
            except (SystemExit, Exception) as e:  # report every file, then fail
                print(f"FAILED {entry['file']}: {e}")
                failed.append(entry["file"])
    if failed:
        raise SystemExit(f"{len(failed)} files failed: {failed}")


if __name__ == "__main__":
    main()
