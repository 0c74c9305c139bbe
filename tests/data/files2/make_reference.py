"""Independent references for tests/readers_round2.rs (files of issue 36).

Run from this directory with numpy, pyscf 2.14, MDAnalysis 2.11, gemmi 0.7, ase 3.29 and
biotite installed; writes reference.json, water_homo_molden_layout.cube, adk_open_be.coor and
1f2n_assembly_ca.pdb.gz. Nothing here uses orbitfield.
"""

import gzip
import json
import math
import os
import shutil
import struct
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = {}


def ungz(path):
    """A temporary uncompressed copy of a .gz file (the readers below want plain files)."""
    fd, tmp = tempfile.mkstemp(suffix=os.path.basename(path)[: -len(".gz")])
    with gzip.open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return tmp


def every(n_atoms, step):
    idx = list(range(0, n_atoms, step))
    if n_atoms - 1 not in idx:
        idx.append(n_atoms - 1)
    return idx


# --- 1. A cube in Molden's layout (orbital-index line with a positive atom count) -------------
def molden_layout_cube():
    from pyscf.tools import molden

    src = ungz(os.path.join(HERE, "..", "qm", "water_hf_631gs_sph.molden.gz"))
    mol, energies, coeff, occ, _, _ = molden.load(src)
    homo = int(np.nonzero(occ > 0)[0][-1])
    origin = np.array([-3.0, -3.2, -2.8])
    steps = np.array([0.40, 0.38, 0.36])
    dims = (15, 16, 17)
    pts = []
    for i in range(dims[0]):
        for j in range(dims[1]):
            for k in range(dims[2]):
                pts.append(origin + steps * np.array([i, j, k]))
    pts = np.array(pts)
    ao = mol.eval_gto("GTOval_sph" if not mol.cart else "GTOval_cart", pts)
    values = ao @ coeff[:, homo]
    lines = [
        "water HF/6-31G* orbital %d in Molden's cube layout (make_reference.py)" % (homo + 1),
        "Orbital %4d" % (homo + 1),
        "%5d%12.6f%12.6f%12.6f" % (mol.natm, *origin),
    ]
    for a in range(3):
        v = [0.0, 0.0, 0.0]
        v[a] = steps[a]
        lines.append("%5d%12.6f%12.6f%12.6f" % (dims[a], *v))
    for i in range(mol.natm):
        lines.append("%5d%12.6f%12.6f%12.6f%12.6f" % (mol.atom_charge(i), 0.0, *mol.atom_coord(i)))
    lines.append("%5d%5d" % (1, homo + 1))
    rows = values.reshape(dims[0] * dims[1], dims[2])
    for row in rows:
        for s in range(0, dims[2], 6):
            lines.append("".join("%13.5E" % v for v in row[s : s + 6]))
    with open(os.path.join(HERE, "water_homo_molden_layout.cube"), "w") as f:
        f.write("\n".join(lines) + "\n")
    OUT["cube"] = {
        "file": "water_homo_molden_layout.cube",
        "wavefunction": "../qm/water_hf_631gs_sph.molden.gz",
        "orbital_number": homo + 1,
        "origin_bohr": origin.tolist(),
        "steps_bohr": steps.tolist(),
        "dims": list(dims),
        "values_z_fastest": [float("%.9e" % v) for v in values],
    }
    os.remove(src)


# --- 1b. A cube written by the Molden program, against its own wavefunction --------------------
def molden_written_cube():
    """smparker/molecular-blender examples/water.cube ("Molden generated cube file", orbital 5)
    and the wavefunction it was made from (examples/water-sto-3g.molden, same atoms). The header
    prints the lattice with 6 decimals (f12.6), which moves the points by up to ~1e-5 bohr: the
    lattice is refined by least squares against the orbital's values (12 numbers: origin and axes;
    each moves by less than 1e-6), and PySCF's values at the refined points are the reference."""
    from pyscf.tools import molden

    mol, _, coeff, _, _, _ = molden.load(os.path.join(HERE, "water_sto3g.molden"))
    with gzip.open(os.path.join(HERE, "water_mo5_molden.cube.gz"), "rt") as f:
        lines = f.read().split("\n")
    assert lines[0].startswith("Molden generated cube file") and lines[1].split() == ["Orbital", "5"]
    natm = int(lines[2].split()[0])
    origin = np.array([float(x) for x in lines[2].split()[1:4]])
    axes = np.array([[float(x) for x in lines[3 + a].split()[1:4]] for a in range(3)])
    dims = [int(lines[3 + a].split()[0]) for a in range(3)]
    values = np.array(" ".join(lines[6 + natm :]).split(), float)
    assert values.size == np.prod(dims) and natm == mol.natm
    i, j, k = [g.reshape(-1, 1).astype(float) for g in np.meshgrid(*[np.arange(n) for n in dims], indexing="ij")]
    c = coeff[:, 4]

    def at(o, a):
        pts = o + i * a[0] + j * a[1] + k * a[2]
        return pts, mol.eval_gto("GTOval", pts) @ c

    _, psi_header = at(origin, axes)
    o, a = origin.copy(), axes.copy()
    for _ in range(4):
        pts, psi = at(o, a)
        g = np.einsum("xpa,a->px", mol.eval_gto("GTOval_ip", pts), c)
        step = np.linalg.lstsq(np.hstack([g, i * g, j * g, k * g]), values - psi, rcond=None)[0]
        o, a = o + step[:3], a + step[3:].reshape(3, 3)
    _, psi = at(o, a)
    shift = max(abs(o - origin).max(), abs(a - axes).max())
    assert shift < 1e-6, shift
    rng = np.random.default_rng(5)
    sample = rng.choice(values.size, 3000, replace=False)
    ijk = [[int(i[s, 0]), int(j[s, 0]), int(k[s, 0])] for s in sample]
    OUT["molden_cube"] = {
        "file": "water_mo5_molden.cube.gz",
        "wavefunction": "water_sto3g.molden",
        "orbital_number": 5,
        "dims": dims,
        "origin_bohr_header": origin.tolist(),
        "axes_bohr_header": axes.tolist(),
        "origin_bohr_refined": o.tolist(),
        "axes_bohr_refined": a.tolist(),
        "largest_lattice_shift_bohr": float(shift),
        "max_difference_at_header_lattice": float(abs(psi_header - values).max()),
        "max_difference_at_refined_lattice": float(abs(psi - values).max()),
        "sample_ijk": ijk,
        "sample_values": [float("%.9e" % psi[s]) for s in sample],
    }


# --- 2. NWChem Cartesian Molden file: the density of its orbitals, evaluated by PySCF -----------
NWCHEM_SVP_ENERGY = -217.085496640376  # "Total SCF energy" printed in N4.nwo (molden2qmc test)


def nwchem_density():
    from pyscf import gto, scf

    path = ungz(os.path.join(HERE, "N4_nwchem_svp_cart.molden.gz"))
    lines = open(path).read().split("\n")
    atoms = [("N", [float(x) for x in l.split()[3:6]]) for l in lines[2:6]]
    mos, occ = [], []
    for l in lines[lines.index("[MO]") + 1 :]:
        t = l.split()
        if not t:
            continue
        if t[0].startswith("Occup"):
            occ.append(float(t[1]))
            mos.append([])
        elif len(t) == 2 and t[0].isdigit():
            mos[-1].append(float(t[1]))
    c = np.array(mos).T
    occ = np.array(occ)
    mol = gto.M(atom=atoms, unit="Bohr", basis="def2-svp", cart=True, verbose=0)
    # Molden's Cartesian d order to PySCF's, and NWChem's d scaling (xx, yy, zz: 3/2; xy, xz, yz: sqrt 3)
    molden_d = ["xx", "yy", "zz", "xy", "xz", "yz"]
    labels = mol.ao_labels()
    perm, scale = [], []
    j = 0
    while j < len(labels):
        lab = labels[j].split()[2].lstrip("0123456789")
        if lab[0] == "d":
            for q in range(6):
                comp = labels[j + q].split()[2].lstrip("0123456789")[1:]
                perm.append(j + molden_d.index(comp))
                scale.append(1.5 if comp in ("xx", "yy", "zz") else math.sqrt(3.0))
            j += 6
        else:
            perm.append(j)
            scale.append(1.0)
            j += 1
    c = c[perm] * np.array(scale)[:, None]
    s = mol.intor("int1e_ovlp")
    norm = np.sqrt(np.diag(s))
    c_unit = c  # coefficients of unit-normalised functions
    o = c_unit[:, occ > 0]
    sn = s / norm[:, None] / norm[None, :]
    dev = abs(o.T @ sn @ o - np.eye(o.shape[1])).max()
    c_pyscf = c_unit / norm[:, None]  # PySCF's Cartesian functions are not unit-normalised
    dm = (c_pyscf * occ) @ c_pyscf.T
    energy = scf.RHF(mol).energy_tot(dm)
    assert dev < 1e-7, dev
    assert abs(energy - NWCHEM_SVP_ENERGY) < 1e-6, energy
    rng = np.random.default_rng(36)
    pts = np.vstack([mol.atom_coords() + rng.normal(0, 0.3, (4, 3)) for _ in range(6)] + [rng.uniform(-4, 4, (16, 3))])
    ao = mol.eval_gto("GTOval_cart", pts)
    rho = np.einsum("pi,ij,pj->p", ao, dm, ao)
    OUT["nwchem_svp_cart"] = {
        "file": "N4_nwchem_svp_cart.molden.gz",
        "orthonormality_deviation": float(dev),
        "energy_hartree_of_file_density": float(energy),
        "nwchem_scf_energy_hartree": NWCHEM_SVP_ENERGY,
        "points_bohr": pts.tolist(),
        "density": [float(x) for x in rho],
    }
    os.remove(path)


# --- 2b. NWChem Cartesian f and g (def2-TZVP, def2-QZVP): the files lost a coefficient ---------
NWCHEM_CART_ENERGY = {"tzvp": -217.297959197588}  # "Total SCF energy" in the run's N4.nwo
MOLDEN_CART = {
    2: ["xx", "yy", "zz", "xy", "xz", "yz"],
    3: ["xxx", "yyy", "zzz", "xyy", "xxy", "xxz", "xzz", "yzz", "yyz", "xyz"],
    4: ["xxxx", "yyyy", "zzzz", "xxxy", "xxxz", "yyyx", "yyyz", "zzzx", "zzzy", "xxyy", "xxzz", "yyzz", "xxyz", "yyxz", "zzxy"],
}


def dfact(n):
    return 1 if n <= 0 else n * dfact(n - 2)


def nwchem_cartesian_scale(comp):
    """NWChem's Cartesian x^a y^b z^c in its Molden files, relative to the unit-normalised
    function: sqrt((2l-1)!! (2a-1)!! (2b-1)!! (2c-1)!!) / (a! b! c!) (d: xx 3/2, xy sqrt 3)."""
    p = [comp.count(x) for x in "xyz"]
    odd = math.prod(dfact(2 * e - 1) for e in p)
    return math.sqrt(dfact(2 * len(comp) - 1) * odd) / math.prod(math.factorial(e) for e in p)


def nwchem_f_g():
    """The molden2qmc N4 def2-TZVP Cartesian file (its def2-QZVP twin has the same defect; with 60
    linearly dependent vectors removed and g functions its restoration is not unique, see README). In every orbital the coefficient written
    for f xxz (6th of each f shell) equals the one for f xxy (5th): the writer (a patched NWChem
    6.6) wrote xxy twice and lost xxz. Everything else follows the rule above. The lost
    coefficients of the occupied orbitals are found again by orthonormality (Gauss-Newton from
    zero, in the file's own convention) and checked against NWChem's SCF energy: the density of
    the orbitals so restored has NWChem's energy. Reference: PySCF (its own def2 basis, cart=True)
    density of those orbitals."""
    from pyscf import gto, scf

    for name in ("tzvp",):
        fname = "N4_nwchem_%s_cart.molden.gz" % name
        with gzip.open(os.path.join(HERE, fname), "rt") as f:
            lines = f.read().split("\n")
        atoms = [("N", [float(x) for x in l.split()[3:6]]) for l in lines[2:6]]
        mos, occ = [], []
        for l in lines[lines.index("[MO]") + 1 :]:
            t = l.split()
            if t and t[0].startswith("Occup"):
                occ.append(float(t[1]))
                mos.append([])
            elif len(t) == 2 and t[0].isdigit():
                mos[-1].append(float(t[1]))
        c_file = np.array(mos).T  # file functions x orbitals
        occ = np.array(occ)
        mol = gto.M(atom=atoms, unit="Bohr", basis="def2-" + name, cart=True, verbose=0)
        assert mol.nao == c_file.shape[0], (mol.nao, c_file.shape)
        # File function -> PySCF AO, with NWChem's scale; the file positions of f xxy and xxz.
        labels = [l.split()[2].lstrip("0123456789") for l in mol.ao_labels()]
        to_ao, scale, xxy, xxz = [0] * mol.nao, [1.0] * mol.nao, [], []
        j = 0
        while j < mol.nao:
            l = "spdfg".index(labels[j][0])
            n = (l + 1) * (l + 2) // 2
            if l < 2:
                for q in range(n):
                    to_ao[j + q] = j + q
            else:
                comps = ["".join(sorted(lab[1:])) for lab in labels[j : j + n]]
                for q, m in enumerate(MOLDEN_CART[l]):
                    to_ao[j + q] = j + comps.index("".join(sorted(m)))
                    scale[j + q] = nwchem_cartesian_scale(m)
                if l == 3:
                    xxy.append(j + 4)
                    xxz.append(j + 5)
            j += n
        assert all(np.array_equal(c_file[a], c_file[b]) for a, b in zip(xxy, xxz))
        s = mol.intor("int1e_ovlp")
        norm = np.sqrt(np.diag(s))
        sn = s / norm[:, None] / norm[None, :]
        occ_idx = np.nonzero(occ > 0)[0]
        nocc = len(occ_idx)

        def unit(cf):  # file-convention coefficients -> coefficients of unit-normalised AOs
            out = np.zeros_like(cf)
            out[to_ao] = cf * np.array(scale)[:, None]
            return out

        cf = c_file[:, occ_idx].copy()
        cf[xxz] = 0.0
        iu = np.triu_indices(nocc)
        for _ in range(12):
            m = unit(cf)
            sm = sn @ m
            res = (m.T @ sm - np.eye(nocc))[iu]
            jac = np.zeros((len(iu[0]), len(xxz) * nocc))
            for r, row in enumerate(xxz):
                ao, sc = to_ao[row], scale[row]
                for q in range(nocc):
                    d = np.zeros((nocc, nocc))
                    d[q, :] += sc * sm[ao]
                    d[:, q] += sc * sm[ao]
                    jac[:, r * nocc + q] = d[iu]
            step = np.linalg.lstsq(jac, -res, rcond=None)[0].reshape(len(xxz), nocc)
            cf[xxz] += step
        m = unit(cf)
        dev = abs(m.T @ sn @ m - np.eye(nocc)).max()
        c_pyscf = m / norm[:, None]
        dm = (c_pyscf * occ[occ_idx]) @ c_pyscf.T
        energy = scf.RHF(mol).energy_tot(dm)
        m_lost = unit(c_file[:, occ_idx])
        dev_as_written = abs(m_lost.T @ sn @ m_lost - np.eye(nocc)).max()
        assert dev < 1e-7, dev
        assert abs(energy - NWCHEM_CART_ENERGY[name]) < 1e-6, (energy, NWCHEM_CART_ENERGY[name])
        rng = np.random.default_rng(37)
        pts = np.vstack([mol.atom_coords() + rng.normal(0, 0.3, (4, 3)) for _ in range(6)] + [rng.uniform(-4, 4, (16, 3))])
        ao = mol.eval_gto("GTOval_cart", pts)
        rho = np.einsum("pi,ij,pj->p", ao, dm, ao)
        OUT["nwchem_%s_cart" % name] = {
            "file": fname,
            "xxz_function_numbers": [r + 1 for r in xxz],
            "occupied_orbital_numbers": [int(q) + 1 for q in occ_idx],
            "restored_xxz_coefficients": [[float("%.12e" % v) for v in cf[r]] for r in xxz],
            "orthonormality_deviation_as_written": float(dev_as_written),
            "orthonormality_deviation_restored": float(dev),
            "energy_hartree_of_restored_density": float(energy),
            "nwchem_scf_energy_hartree": NWCHEM_CART_ENERGY[name],
            "points_bohr": pts.tolist(),
            "density": [float(x) for x in rho],
        }
        print(name, "deviation as written %.2e, restored %.2e; energy %.10f (NWChem %.10f)" % (dev_as_written, dev, energy, NWCHEM_CART_ENERGY[name]))


# --- 3. MDAnalysis: CHARMM CRD (normal, EXT), AMBER .crd trajectory, NAMD binary ---------------
def atoms_ref(u, step):
    n = len(u.atoms)
    idx = every(n, step)
    return {
        "n_atoms": n,
        "indices": idx,
        "names": [str(u.atoms[i].name) for i in idx],
        "resnames": [str(u.atoms[i].resname) for i in idx],
        "resids": [int(u.atoms[i].resid) for i in idx],
        "segids": [str(u.atoms[i].segid) for i in idx],
        "positions_angstrom": [[float(x) for x in u.atoms.positions[i]] for i in idx],
    }


def mdanalysis_refs():
    import MDAnalysis as mda

    crd = ungz(os.path.join(HERE, "adk_open.crd.gz"))
    OUT["charmm_crd_normal"] = dict(file="adk_open.crd.gz", **atoms_ref(mda.Universe(crd, format="CRD"), 97))
    os.remove(crd)
    OUT["charmm_crd_ext"] = dict(file="ala3.drude.crd", **atoms_ref(mda.Universe(os.path.join(HERE, "ala3.drude.crd"), format="CRD"), 3))

    top = ungz(os.path.join(HERE, "cg-amb.prmtop.gz"))
    u = mda.Universe(top, os.path.join(HERE, "cg.crd"), topology_format="PRMTOP", format="TRJ")
    frames = [[[float(x) for x in ts.positions[i]] for i in every(len(u.atoms), 7)] for ts in u.trajectory]
    OUT["amber_crd"] = {
        "files": ["cg-amb.prmtop.gz", "cg.crd"],
        "n_atoms": len(u.atoms),
        "n_frames": len(u.trajectory),
        "indices": every(len(u.atoms), 7),
        "positions_angstrom": frames,
    }
    os.remove(top)

    psf = os.path.join(HERE, "..", "md", "adk.psf")
    coor = os.path.join(HERE, "adk_open.coor")
    u = mda.Universe(psf, coor, format="NAMDBIN")
    idx = every(len(u.atoms), 97)
    OUT["namdbin"] = {
        "files": ["../md/adk.psf", "adk_open.coor", "adk_open_be.coor"],
        "n_atoms": len(u.atoms),
        "indices": idx,
        "positions_angstrom": [[float(x) for x in u.atoms.positions[i]] for i in idx],
    }
    # The same coordinates written big-endian (a file from a big-endian machine).
    raw = open(coor, "rb").read()
    n = struct.unpack("<i", raw[:4])[0]
    vals = struct.unpack("<%dd" % (3 * n), raw[4:])
    with open(os.path.join(HERE, "adk_open_be.coor"), "wb") as f:
        f.write(struct.pack(">i", n) + struct.pack(">%dd" % (3 * n), *vals))


# --- 4. ASE: extended XYZ -------------------------------------------------------------------
def ase_extxyz():
    import ase.io

    a = ase.io.read(os.path.join(HERE, "si_extxyz.xyz"), format="extxyz")
    OUT["extxyz"] = {
        "file": "si_extxyz.xyz",
        "symbols": a.get_chemical_symbols(),
        "cell_vectors_angstrom": a.cell.array.tolist(),
        "cell_lengths_angles": a.cell.cellpar().tolist(),
        "positions_angstrom": a.positions.tolist(),
    }


# --- 5. gemmi: a PDB file of 180 chains (two-character ids) and hybrid-36 serials --------------
def gemmi_assembly_pdb():
    import gemmi

    st = gemmi.read_structure(os.path.join(HERE, "1f2n.cif.gz"))
    st.setup_entities()
    model = gemmi.make_assembly(st.assemblies[0], st[0], gemmi.HowToNameCopiedChain.Short)
    out = gemmi.Structure()
    out.cell = gemmi.UnitCell()
    out.add_model(model)
    out.remove_ligands_and_waters()
    sel = gemmi.Selection("/1/*/*/CA[C]")
    out = sel.copy_structure_selection(out)
    for ch in out[0]:  # every fifth residue keeps the file small; all 180 chains stay
        for i in reversed(range(len(ch))):
            if ch[i].seqid.num % 5 != 0:
                del ch[i]
    serial = 99_901
    for ch in out[0]:
        for res in ch:
            for at in res:
                at.serial = serial
                serial += 1
    opts = gemmi.PdbWriteOptions(minimal=True, preserve_serial=True)
    text = out.make_pdb_string(opts)
    path = os.path.join(HERE, "1f2n_assembly_ca.pdb.gz")
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(text.encode())
    back = gemmi.read_structure(path)
    atoms = [(ch.name, res.name, res.seqid.num, at.name, at.pos) for ch in back[0] for res in ch for at in res]
    idx = every(len(atoms), 211)
    OUT["pdb_assembly"] = {
        "file": "1f2n_assembly_ca.pdb.gz",
        "n_atoms": len(atoms),
        "n_chains": len(back[0]),
        "chain_names_in_order": [ch.name for ch in back[0]],
        "last_serial": serial - 1,
        "indices": idx,
        "chains": [atoms[i][0] for i in idx],
        "resnames": [atoms[i][1] for i in idx],
        "resids": [atoms[i][2] for i in idx],
        "positions_angstrom": [[atoms[i][4].x, atoms[i][4].y, atoms[i][4].z] for i in idx],
    }


# --- 6. BinaryCIF: the mmCIF twins read by gemmi, and a Mol*-encoded file read by biotite -------
def bcif_refs():
    import gemmi

    refs = {}
    for entry in ["3o5r", "1l2y", "1f2n"]:
        doc = gemmi.cif.read(os.path.join(HERE, entry + ".cif.gz"))
        b = doc.sole_block()
        alt = b.find_values("_atom_site.label_alt_id")
        models = b.find_values("_atom_site.pdbx_PDB_model_num")
        first = models[0]
        n_first = sum(1 for m in models if m == first)
        st = gemmi.read_structure(os.path.join(HERE, entry + ".cif.gz"))
        refs[entry] = {
            "n_atoms": n_first,
            "n_models": len(st),
            "altloc_atoms": sum(1 for i in range(n_first) if alt[i] not in ".?"),
            "chains": sorted({ch.name for ch in st[0]}),
            "cell": [st.cell.a, st.cell.b, st.cell.c, st.cell.alpha, st.cell.beta, st.cell.gamma],
        }
    OUT["bcif_twins"] = refs

    import biotite.structure.io.pdbx as pdbx

    f = pdbx.BinaryCIFFile.read(os.path.join(HERE, "3lzm.bcif"))
    arr = pdbx.get_structure(f, model=1, altloc="all", extra_fields=[])
    idx = every(len(arr), 53)
    OUT["bcif_molstar"] = {
        "file": "3lzm.bcif",
        "n_atoms": len(arr),
        "indices": idx,
        "names": [str(arr.atom_name[i]) for i in idx],
        "positions_angstrom": [[float(x) for x in arr.coord[i]] for i in idx],
    }


if __name__ == "__main__":
    molden_layout_cube()
    molden_written_cube()
    nwchem_density()
    nwchem_f_g()
    mdanalysis_refs()
    ase_extxyz()
    gemmi_assembly_pdb()
    bcif_refs()
    with open(os.path.join(HERE, "reference.json"), "w") as f:
        json.dump(OUT, f, indent=1)
        f.write("\n")
