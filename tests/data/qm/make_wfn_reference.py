"""Writes AIM wfn and wfx files from PySCF wavefunctions, and reference values at points.

Run with PySCF 2.14.0:  python make_wfn_reference.py   (writes into the current directory)

Outputs
  water_rhf_ccpvdz.wfn       + water_rhf_ccpvdz_wfn.ref.txt    RHF, spherical cc-pVDZ (d on O)
  ch2_uhf_631gs.wfx          + ch2_uhf_631gs_wfx.ref.txt       UHF triplet CH2, spherical 6-31G*

The wfn/wfx files list every Cartesian primitive (centre, type, exponent) and the MO coefficients of
those unnormalised primitives, full double precision. Primitive coefficients follow PySCF's own
recipe (contraction coefficients from mol._libcint_ctr_coeff, cart2sph) and are checked here against
mol.eval_gto before anything is written. Reference columns are evaluated by PySCF (eval_gto, make_rdm1).
"""
import numpy as np
from pyscf import gto, scf

# Cartesian types of the AIM format, (a, b, c) powers; index 0 is type 1.
TYPES = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1),
         (2, 0, 0), (0, 2, 0), (0, 0, 2), (1, 1, 0), (1, 0, 1), (0, 1, 1),
         (3, 0, 0), (0, 3, 0), (0, 0, 3), (2, 1, 0), (2, 0, 1), (0, 2, 1), (1, 2, 0), (1, 0, 2), (0, 1, 2), (1, 1, 1),
         (4, 0, 0), (0, 4, 0), (0, 0, 4), (3, 1, 0), (3, 0, 1), (1, 3, 0), (0, 3, 1), (1, 0, 3), (0, 1, 3),
         (2, 2, 0), (2, 0, 2), (0, 2, 2), (2, 1, 1), (1, 2, 1), (1, 1, 2)]


def pyscf_cart_order(l):
    return [(a, b, l - a - b) for a in range(l, -1, -1) for b in range(l - a, -1, -1)]


def primitives(mol, mo_coeff):
    """Rows: (atom, type, exponent); matrix [nprim, nmo] of raw primitive coefficients."""
    rows, blocks = [], []
    p0 = 0
    nmo = mo_coeff.shape[1]
    for ib in range(mol.nbas):
        l = mol.bas_angular(ib)
        es = mol.bas_exp(ib)
        c = mol._libcint_ctr_coeff(ib)  # [nprim, nctr]
        nprim, nctr = c.shape
        nd = nctr * (2 * l + 1)
        sub = mo_coeff[p0:p0 + nd].reshape(nctr, 2 * l + 1, nmo)
        c2s = gto.cart2sph(l)  # [ncart, 2l+1]
        cart = np.einsum('kyi,cy,pk->pci', sub, c2s, c)  # [nprim, ncart, nmo]
        for ip in range(nprim):
            for ic, pw in enumerate(pyscf_cart_order(l)):
                rows.append((mol.bas_atom(ib), TYPES.index(pw) + 1, es[ip]))
                blocks.append(cart[ip, ic])
        p0 += nd
    return rows, np.array(blocks)


def eval_primitives(mol, rows, coef, coords):
    out = np.zeros((len(coords), coef.shape[1]))
    for (ia, t, e), c in zip(rows, coef):
        d = coords - mol.atom_coord(ia)
        a, b, cc = TYPES[t - 1]
        g = d[:, 0] ** a * d[:, 1] ** b * d[:, 2] ** cc * np.exp(-e * (d ** 2).sum(1))
        out += np.outer(g, c)
    return out


def points(mol, n=400, seed=7):
    rng = np.random.default_rng(seed)
    xyz = mol.atom_coords()
    lo, hi = xyz.min(0) - 3.0 / 0.52917721092, xyz.max(0) + 3.0 / 0.52917721092
    pts = rng.uniform(lo, hi, size=(n, 3))
    near = np.concatenate([xyz[i] + rng.normal(scale=0.4, size=(20, 3)) for i in range(len(xyz))])
    return np.vstack([pts, near])


def write_wfn(path, mol, rows, coef, occ, energies, etot):
    nprim, nmo = coef.shape
    with open(path, 'w') as f:
        f.write('Water RHF/cc-pVDZ written from PySCF by make_wfn_reference.py\n')
        f.write('GAUSSIAN %14d MOL ORBITALS %6d PRIMITIVES %8d NUCLEI\n' % (nmo, nprim, mol.natm))
        for ia in range(mol.natm):
            x, y, z = mol.atom_coord(ia)
            f.write('  %-2s %4d    (CENTRE%3d) %20.14f%20.14f%20.14f  CHARGE = %4.1f\n'
                    % (mol.atom_pure_symbol(ia), ia + 1, ia + 1, x, y, z, mol.atom_charge(ia)))
        for i in range(0, nprim, 20):
            f.write('CENTRE ASSIGNMENTS  ' + ''.join('%3d' % (r[0] + 1) for r in rows[i:i + 20]) + '\n')
        for i in range(0, nprim, 20):
            f.write('TYPE ASSIGNMENTS    ' + ''.join('%3d' % r[1] for r in rows[i:i + 20]) + '\n')
        for i in range(0, nprim, 5):
            f.write('EXPONENTS ' + ''.join(' %22.15E' % r[2] for r in rows[i:i + 5]) + '\n')
        for k in range(nmo):
            f.write('MO%5d     MO 0.0        OCC NO = %13.8f  ORB. ENERGY = %14.8f\n' % (k + 1, occ[k], energies[k]))
            for i in range(0, nprim, 4):
                f.write(''.join(' %22.15E' % v for v in coef[i:i + 4, k]) + '\n')
        f.write('END DATA\n')
        f.write(' THE  HF ENERGY = %20.12f THE VIRIAL(-V/T)= %12.8f\n' % (etot, 2.0))


def write_wfx(path, mol, rows, coefs, occs, energies, spins, etot, mult):
    nprim = len(rows)
    def block(tag, values, fmt, per=5):
        s = '<%s>\n' % tag
        for i in range(0, len(values), per):
            s += ' '.join(fmt % v for v in values[i:i + per]) + '\n'
        return s + '</%s>\n' % tag
    with open(path, 'w') as f:
        f.write('<Title>\nCH2 triplet UHF/6-31G* written from PySCF by make_wfn_reference.py\n</Title>\n')
        f.write('<Keywords>\nGTO\n</Keywords>\n')
        f.write('<Number of Nuclei>\n%d\n</Number of Nuclei>\n' % mol.natm)
        f.write('<Number of Occupied Molecular Orbitals>\n%d\n</Number of Occupied Molecular Orbitals>\n' % len(occs))
        f.write('<Number of Perturbations>\n0\n</Number of Perturbations>\n')
        f.write('<Net Charge>\n0\n</Net Charge>\n')
        f.write('<Number of Electrons>\n%d\n</Number of Electrons>\n' % mol.nelectron)
        f.write('<Number of Alpha Electrons>\n%d\n</Number of Alpha Electrons>\n' % mol.nelec[0])
        f.write('<Number of Beta Electrons>\n%d\n</Number of Beta Electrons>\n' % mol.nelec[1])
        f.write('<Electronic Spin Multiplicity>\n%d\n</Electronic Spin Multiplicity>\n' % mult)
        f.write('<Nuclear Names>\n' + ''.join('%s%d\n' % (mol.atom_pure_symbol(i), i + 1) for i in range(mol.natm)) + '</Nuclear Names>\n')
        f.write(block('Atomic Numbers', [int(mol.atom_charge(i)) for i in range(mol.natm)], '%d', 1))
        f.write(block('Nuclear Charges', [mol.atom_charge(i) for i in range(mol.natm)], '%.12E', 1))
        f.write(block('Nuclear Cartesian Coordinates', list(mol.atom_coords().ravel()), '%22.15E', 3))
        f.write('<Number of Primitives>\n%d\n</Number of Primitives>\n' % nprim)
        f.write(block('Primitive Centers', [r[0] + 1 for r in rows], '%d', 10))
        f.write(block('Primitive Types', [r[1] for r in rows], '%d', 10))
        f.write(block('Primitive Exponents', [r[2] for r in rows], '%22.15E', 4))
        f.write(block('Molecular Orbital Occupation Numbers', list(occs), '%.12E', 1))
        f.write(block('Molecular Orbital Energies', list(energies), '%.12E', 1))
        f.write('<Molecular Orbital Spin Types>\n' + ''.join(' %s\n' % s for s in spins) + '</Molecular Orbital Spin Types>\n')
        f.write('<Molecular Orbital Primitive Coefficients>\n')
        for k in range(coefs.shape[1]):
            f.write('<MO Number>\n%d\n</MO Number>\n' % (k + 1))
            for i in range(0, nprim, 4):
                f.write(' '.join('%22.15E' % v for v in coefs[i:i + 4, k]) + '\n')
        f.write('</Molecular Orbital Primitive Coefficients>\n')
        f.write('<Energy>\n%.12E\n</Energy>\n' % etot)
        f.write('<Virial Ratio (-V/T)>\n2.0\n</Virial Ratio (-V/T)>\n')


def check_and_ref(mol, rows, coef, mo_coeff, coords):
    ao = mol.eval_gto('GTOval_sph', coords)
    ref = ao @ mo_coeff
    mine = eval_primitives(mol, rows, coef, coords)
    err = np.abs(ref - mine).max() / np.abs(ref).max()
    assert err < 1e-12, err
    return ao


def fmt_rows(pts, cols):
    ang = pts * 0.52917721092
    return '\n'.join(' '.join('%.10e' % v for v in list(p) + list(c)) for p, c in zip(ang, cols)) + '\n'


def water():
    mol = gto.M(atom='O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692', basis='cc-pvdz', unit='Angstrom')
    mf = scf.RHF(mol)
    mf.conv_tol = 1e-11
    mf.kernel()
    rows, coef = primitives(mol, mf.mo_coeff)
    write_wfn('water_rhf_ccpvdz.wfn', mol, rows, coef, mf.mo_occ, mf.mo_energy, mf.e_tot)
    pts = points(mol)
    ao = check_and_ref(mol, rows, coef, mf.mo_coeff, pts)
    mo = ao @ mf.mo_coeff
    dm = mf.make_rdm1()
    rho = np.einsum('pi,ij,pj->p', ao, dm, ao)
    homo = int(np.count_nonzero(mf.mo_occ)) - 1
    cols = np.column_stack([mo[:, homo], mo[:, homo + 1], mo[:, 0], rho])
    with open('water_rhf_ccpvdz_wfn.ref.txt', 'w') as f:
        f.write('# reference values evaluated by PySCF 2.14.0 from the same wavefunction as water_rhf_ccpvdz.wfn\n')
        f.write('# columns: x y z (Angstrom) homo(mo_index_1based=%d) lumo(mo_index_1based=%d) mo1(mo_index_1based=1) total_density (atomic units)\n' % (homo + 1, homo + 2))
        f.write(fmt_rows(pts, cols))


def ch2():
    mol = gto.M(atom='C 0 0 0.1; H 0 0.99 -0.5; H 0 -0.99 -0.5', basis='6-31g*', spin=2, unit='Angstrom')
    mf = scf.UHF(mol)
    mf.conv_tol = 1e-11
    mf.kernel()
    ca, cb = mf.mo_coeff
    ra, coa = primitives(mol, ca)
    rb, cob = primitives(mol, cb)
    assert ra == rb
    # wfx lists occupied orbitals only in many writers; write all, alpha then beta.
    coefs = np.hstack([coa, cob])
    occs = np.concatenate([mf.mo_occ[0], mf.mo_occ[1]])
    ens = np.concatenate([mf.mo_energy[0], mf.mo_energy[1]])
    spins = ['Alpha'] * ca.shape[1] + ['Beta'] * cb.shape[1]
    write_wfx('ch2_uhf_631gs.wfx', mol, ra, coefs, occs, ens, spins, mf.e_tot, 3)
    pts = points(mol)
    ao = check_and_ref(mol, ra, coa, ca, pts)
    check_and_ref(mol, rb, cob, cb, pts)
    moa, mob = ao @ ca, ao @ cb
    da, db = mf.make_rdm1()
    rhoa = np.einsum('pi,ij,pj->p', ao, da, ao)
    rhob = np.einsum('pi,ij,pj->p', ao, db, ao)
    ha, hb = mol.nelec[0] - 1, mol.nelec[1] - 1
    cols = np.column_stack([moa[:, ha], moa[:, ha + 1], mob[:, hb], mob[:, hb + 1], rhoa + rhob, rhoa - rhob])
    with open('ch2_uhf_631gs_wfx.ref.txt', 'w') as f:
        f.write('# reference values evaluated by PySCF 2.14.0 from the same wavefunction as ch2_uhf_631gs.wfx\n')
        f.write('# columns: x y z (Angstrom) alpha_homo(mo_index_1based=%d) alpha_lumo(mo_index_1based=%d) beta_homo(mo_index_1based=%d) beta_lumo(mo_index_1based=%d) total_density spin_density (atomic units)\n' % (ha + 1, ha + 2, hb + 1, hb + 2))
        f.write(fmt_rows(pts, cols))


if __name__ == '__main__':
    water()
    ch2()
