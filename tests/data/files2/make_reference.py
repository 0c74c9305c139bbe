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
    nwchem_density()
    mdanalysis_refs()
    ase_extxyz()
    gemmi_assembly_pdb()
    bcif_refs()
    with open(os.path.join(HERE, "reference.json"), "w") as f:
        json.dump(OUT, f, indent=1)
        f.write("\n")
