"""Writes Gaussian-style formatted checkpoint files from PySCF wavefunctions, and reference values.

Run with PySCF 2.14.0:  python make_fchk_reference.py   (writes into the current directory)

Outputs
  n2_rhf_ccpvqz_cart.fchk  + n2_rhf_ccpvqz_cart_fchk.ref.txt   RHF, Cartesian cc-pVQZ (d, f, g)
  nh2_uhf_ccpvtz_sph.fchk  + nh2_uhf_ccpvtz_sph_fchk.ref.txt   UHF doublet NH2, pure cc-pVTZ (d, f)

Gaussian's conventions as documented for the fchk format: shell types 0 s, 1 p, +l Cartesian,
-l pure; Cartesian component orders d: XX YY ZZ XY XZ YZ; f: XXX YYY ZZZ XYY XXY XXZ XZZ YZZ YYZ XYZ;
g: ZZZZ YZZZ YYZZ YYYZ YYYY XZZZ XYZZ XYYZ XYYY XXZZ XXYZ XXYY XXXZ XXXY XXXX; pure order
0, +1, -1, +2, -2, ...; every Cartesian function of a shell shares the normalisation of x^l.
Real arrays are written as 5E16.8 like Gaussian does. Reference columns are evaluated by PySCF
(eval_gto, make_rdm1) on the points used for the wfn references.
"""
import numpy as np
from pyscf import gto, scf

GAUSS_CART = {
    0: ['', ],
    1: ['x', 'y', 'z'],
    2: ['xx', 'yy', 'zz', 'xy', 'xz', 'yz'],
    3: ['xxx', 'yyy', 'zzz', 'xyy', 'xxy', 'xxz', 'xzz', 'yzz', 'yyz', 'xyz'],
    4: ['zzzz', 'yzzz', 'yyzz', 'yyyz', 'yyyy', 'xzzz', 'xyzz', 'xyyz', 'xyyy', 'xxzz', 'xxyz', 'xxyy', 'xxxz', 'xxxy', 'xxxx'],
}


def powers(label):
    return (label.count('x'), label.count('y'), label.count('z'))


def pyscf_cart_order(l):
    return [(a, b, l - a - b) for a in range(l, -1, -1) for b in range(l - a, -1, -1)]


def shells_and_map(mol):
    """Gaussian shells and, per Gaussian basis function, (PySCF AO index, factor) with C_G = C_P * factor."""
    s = mol.intor('int1e_ovlp')
    shells, amap = [], []
    p0 = 0
    for ib in range(mol.nbas):
        l = mol.bas_angular(ib)
        nctr = mol.bas_nctr(ib)
        es = mol.bas_exp(ib)
        cs = mol.bas_ctr_coeff(ib)
        ncomp = (l + 1) * (l + 2) // 2 if mol.cart else 2 * l + 1
        for k in range(nctr):
            base = p0 + k * ncomp
            if mol.cart or l < 2:
                t = l
                if mol.cart:
                    order = pyscf_cart_order(l)
                    f = np.sqrt(s[base, base])  # x^l component: PySCF's uniform scale of this shell
                    for lab in GAUSS_CART[l]:
                        amap.append((base + order.index(powers(lab)), f))
                else:  # spherical molecule, s or p: PySCF order x y z, already normalised
                    for i in range(ncomp):
                        amap.append((base + i, 1.0))
            else:
                t = -l
                # PySCF pure order m = -l..l; Gaussian 0, +1, -1, +2, -2, ...
                for m in [0] + [s_ * mm for mm in range(1, l + 1) for s_ in (1, -1)]:
                    amap.append((base + m + l, 1.0))
            shells.append((t, mol.bas_atom(ib), es, cs[:, k]))
        p0 += nctr * ncomp
    assert p0 == mol.nao and len(amap) == mol.nao
    return shells, amap


def arr(name, kind, values):
    values = list(values)
    out = '%-40s   %s   N=%12d\n' % (name, kind, len(values))
    if kind == 'I':
        for i in range(0, len(values), 6):
            out += ''.join('%12d' % v for v in values[i:i + 6]) + '\n'
    else:
        for i in range(0, len(values), 5):
            out += ''.join('%16.8E' % v for v in values[i:i + 5]) + '\n'
    return out


def scalar(name, kind, value):
    if kind == 'I':
        return '%-40s   I     %12d\n' % (name, value)
    return '%-40s   R     %22.15E\n' % (name, value)


def write_fchk(path, title, mol, mf, unrestricted):
    shells, amap = shells_and_map(mol)
    idx = np.array([a for a, _ in amap])
    fac = np.array([f for _, f in amap])
    def coefs(c):  # [nao, nmo] PySCF -> Gaussian rows per MO
        return (c[idx, :] * fac[:, None]).T.ravel()
    def packed(dm):
        g = dm[np.ix_(idx, idx)] * np.outer(fac, fac)
        return [g[i, j] for i in range(len(idx)) for j in range(i + 1)]
    nalpha, nbeta = mol.nelec
    t = title[:72] + '\n'
    t += 'SP        %-10s%-30s%s\n' % ('UHF' if unrestricted else 'RHF', '', mol.basis.upper())
    t += scalar('Number of atoms', 'I', mol.natm)
    t += scalar('Charge', 'I', mol.charge)
    t += scalar('Multiplicity', 'I', mol.spin + 1)
    t += scalar('Number of electrons', 'I', mol.nelectron)
    t += scalar('Number of alpha electrons', 'I', nalpha)
    t += scalar('Number of beta electrons', 'I', nbeta)
    t += scalar('Number of basis functions', 'I', mol.nao)
    t += scalar('Number of independent functions', 'I', mol.nao)
    t += arr('Atomic numbers', 'I', [int(mol.atom_charge(i)) for i in range(mol.natm)])
    t += arr('Nuclear charges', 'R', [mol.atom_charge(i) for i in range(mol.natm)])
    t += arr('Current cartesian coordinates', 'R', mol.atom_coords().ravel())
    t += scalar('Number of contracted shells', 'I', len(shells))
    t += scalar('Number of primitive shells', 'I', sum(len(s[2]) for s in shells))
    t += scalar('Pure/Cartesian d shells', 'I', 1 if mol.cart else 0)
    t += scalar('Pure/Cartesian f shells', 'I', 1 if mol.cart else 0)
    t += scalar('Highest angular momentum', 'I', max(abs(s[0]) for s in shells))
    t += scalar('Largest degree of contraction', 'I', max(len(s[2]) for s in shells))
    t += arr('Shell types', 'I', [s[0] for s in shells])
    t += arr('Number of primitives per shell', 'I', [len(s[2]) for s in shells])
    t += arr('Shell to atom map', 'I', [s[1] + 1 for s in shells])
    t += arr('Primitive exponents', 'R', np.concatenate([s[2] for s in shells]))
    t += arr('Contraction coefficients', 'R', np.concatenate([s[3] for s in shells]))
    t += arr('Coordinates of each shell', 'R', np.concatenate([mol.atom_coord(s[1]) for s in shells]))
    t += scalar('Total Energy', 'R', mf.e_tot)
    if unrestricted:
        (ea, eb), (ca, cb) = mf.mo_energy, mf.mo_coeff
        t += arr('Alpha Orbital Energies', 'R', ea)
        t += arr('Alpha MO coefficients', 'R', coefs(ca))
        t += arr('Beta Orbital Energies', 'R', eb)
        t += arr('Beta MO coefficients', 'R', coefs(cb))
        da, db = mf.make_rdm1()
        t += arr('Total SCF Density', 'R', packed(da + db))
        t += arr('Spin SCF Density', 'R', packed(da - db))
    else:
        t += arr('Alpha Orbital Energies', 'R', mf.mo_energy)
        t += arr('Alpha MO coefficients', 'R', coefs(mf.mo_coeff))
        t += arr('Total SCF Density', 'R', packed(mf.make_rdm1()))
    with open(path, 'w') as f:
        f.write(t)


def points(mol, n=400, seed=7):
    rng = np.random.default_rng(seed)
    xyz = mol.atom_coords()
    lo, hi = xyz.min(0) - 3.0 / 0.52917721092, xyz.max(0) + 3.0 / 0.52917721092
    pts = rng.uniform(lo, hi, size=(n, 3))
    near = np.concatenate([xyz[i] + rng.normal(scale=0.4, size=(20, 3)) for i in range(len(xyz))])
    return np.vstack([pts, near])


def fmt_rows(pts, cols):
    ang = pts * 0.52917721092
    return '\n'.join(' '.join('%.10e' % v for v in list(p) + list(c)) for p, c in zip(ang, cols)) + '\n'


def n2():
    mol = gto.M(atom='N 0 0 0.5488; N 0 0 -0.5488', basis='cc-pvqz', cart=True, unit='Angstrom')
    mf = scf.RHF(mol)
    mf.conv_tol = 1e-11
    mf.kernel()
    write_fchk('n2_rhf_ccpvqz_cart.fchk', 'N2 RHF/cc-pVQZ Cartesian written from PySCF by make_fchk_reference.py', mol, mf, False)
    pts = points(mol)
    ao = mol.eval_gto('GTOval_cart', pts)
    mo = ao @ mf.mo_coeff
    rho = np.einsum('pi,ij,pj->p', ao, mf.make_rdm1(), ao)
    h = mol.nelectron // 2 - 1
    with open('n2_rhf_ccpvqz_cart_fchk.ref.txt', 'w') as f:
        f.write('# reference values evaluated by PySCF 2.14.0 from the same wavefunction as n2_rhf_ccpvqz_cart.fchk\n')
        f.write('# columns: x y z (Angstrom) homo(mo_index_1based=%d) lumo(mo_index_1based=%d) mo1(mo_index_1based=1) total_density (atomic units)\n' % (h + 1, h + 2))
        f.write(fmt_rows(pts, np.column_stack([mo[:, h], mo[:, h + 1], mo[:, 0], rho])))


def nh2():
    mol = gto.M(atom='N 0 0 0.15; H 0 0.80 -0.42; H 0 -0.80 -0.42', basis='cc-pvtz', spin=1, unit='Angstrom')
    mf = scf.UHF(mol)
    mf.conv_tol = 1e-11
    mf.kernel()
    write_fchk('nh2_uhf_ccpvtz_sph.fchk', 'NH2 UHF/cc-pVTZ written from PySCF by make_fchk_reference.py', mol, mf, True)
    pts = points(mol)
    ao = mol.eval_gto('GTOval_sph', pts)
    ca, cb = mf.mo_coeff
    moa, mob = ao @ ca, ao @ cb
    da, db = mf.make_rdm1()
    ra = np.einsum('pi,ij,pj->p', ao, da, ao)
    rb = np.einsum('pi,ij,pj->p', ao, db, ao)
    ha, hb = mol.nelec[0] - 1, mol.nelec[1] - 1
    with open('nh2_uhf_ccpvtz_sph_fchk.ref.txt', 'w') as f:
        f.write('# reference values evaluated by PySCF 2.14.0 from the same wavefunction as nh2_uhf_ccpvtz_sph.fchk\n')
        f.write('# columns: x y z (Angstrom) alpha_homo(mo_index_1based=%d) alpha_lumo(mo_index_1based=%d) beta_homo(mo_index_1based=%d) beta_lumo(mo_index_1based=%d) total_density spin_density (atomic units)\n' % (ha + 1, ha + 2, hb + 1, hb + 2))
        f.write(fmt_rows(pts, np.column_stack([moa[:, ha], moa[:, ha + 1], mob[:, hb], mob[:, hb + 1], ra + rb, ra - rb])))


if __name__ == '__main__':
    n2()
    nh2()
