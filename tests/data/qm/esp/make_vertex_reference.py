"""PySCF's electrostatic potential at the vertices of a density isosurface (reference for the
surface colouring test in tests/qm_esp.rs).

Run from this folder with PySCF 2.14 (`python make_vertex_reference.py`); writes, for each NAME below:

- NAME.density_lattice.cube.gz: PySCF's electron density (bohr^-3) of ../NAME.molden.gz on an
  axis-aligned lattice (the molecule's box padded by PAD Angstrom, SPACING Angstrom apart), as a
  Gaussian cube file (bohr). The density is `dft.numint.eval_rho` of the file's orbitals read by
  PySCF's own Molden reader, with the density matrix of `make_qm_esp_reference.py`.
- NAME.vertex_esp.txt.gz: every point where the 0.002 bohr^-3 isosurface of that lattice crosses a
  lattice edge (x y z in Angstrom; linear interpolation between the edge's two values as they read
  back from the cube text, in float32 as a reader keeps them), and PySCF's potential there
  (hartree/e; nuclei plus electrons, the integrals of `pyscf.tools.cubegen.mep`).

These points are the vertices of the marching-cubes surface of the lattice (one vertex per crossed
edge), so the test extracts the surface from the cube, finds each of its vertices among them, and
compares the potential it evaluates at the vertex with PySCF's. No value of the lattice equals the
isovalue (checked here), so which edges are crossed is unambiguous.
"""
import gzip

import numpy as np
from pyscf.dft import numint

from make_qm_esp_reference import ANGSTROM, density, load, potential, write_points

CASES = [("water_hf_631gs_sph", 0.5, 3.0), ("threonine_hf_631gs_cart", 0.7, 3.0)]
ISO = np.float32(0.002)


def cube_text(name, mol, origin, spacing, dims, values):
    lines = [
        f"{name}: electron density (bohr^-3), PySCF 2.14 numint.eval_rho",
        "lattice of make_vertex_reference.py",
        f"{mol.natm:5d} {origin[0]:12.6f} {origin[1]:12.6f} {origin[2]:12.6f}",
    ]
    for a in range(3):
        step = [0.0, 0.0, 0.0]
        step[a] = spacing
        lines.append(f"{dims[a]:5d} {step[0]:12.6f} {step[1]:12.6f} {step[2]:12.6f}")
    for z, r in zip(mol.atom_charges(), mol.atom_coords()):
        lines.append(f"{z:5d} {float(z):12.6f} {r[0]:12.6f} {r[1]:12.6f} {r[2]:12.6f}")
    # Cube order: x slowest, z fastest; six values a line, restarting per (x, y) row.
    for i in range(dims[0]):
        for j in range(dims[1]):
            row = values[i, j, :]
            for s in range(0, len(row), 6):
                lines.append(" ".join(f"{v:.8E}" for v in row[s : s + 6]))
    return "\n".join(lines) + "\n"


def crossings(origin, spacing, values):
    """Edge crossings of the isosurface (bohr), in float32 interpolation as the reader's values."""
    out = []
    dims = values.shape
    inside = values > ISO
    for axis in range(3):
        sl_a = [slice(None)] * 3
        sl_b = [slice(None)] * 3
        sl_a[axis] = slice(0, dims[axis] - 1)
        sl_b[axis] = slice(1, dims[axis])
        crossed = inside[tuple(sl_a)] != inside[tuple(sl_b)]
        for idx in zip(*np.nonzero(crossed)):
            p = np.array(idx)
            q = p.copy()
            q[axis] += 1
            va = values[tuple(p)]
            vb = values[tuple(q)]
            t = np.float32((ISO - va) / (vb - va))
            f = p.astype(np.float64)
            f[axis] += float(t)
            out.append(origin + f * spacing)
    return np.array(out)


def main():
    for name, spacing_a, pad_a in CASES:
        mol, _e, mo_coeff, mo_occ, _irrep, _spins = load(name)
        dm, _how, _worst, _n = density(mol, mo_coeff, mo_occ)
        coords = mol.atom_coords()
        # Rounded as the cube prints them, so that the reader's lattice is this one.
        spacing = round(spacing_a * ANGSTROM, 6)
        origin = np.round(coords.min(axis=0) - pad_a * ANGSTROM, 6)
        hi = coords.max(axis=0) + pad_a * ANGSTROM
        dims = tuple(int(np.ceil((hi[a] - origin[a]) / spacing)) + 1 for a in range(3))
        grid = np.array(
            [[[origin + np.array([i, j, k]) * spacing for k in range(dims[2])] for j in range(dims[1])] for i in range(dims[0])]
        ).reshape(-1, 3)
        ao = numint.eval_ao(mol, grid)
        rho = numint.eval_rho(mol, ao, dm).reshape(dims)
        text = cube_text(name, mol, origin, spacing, dims, rho)
        with gzip.GzipFile(f"{name}.density_lattice.cube.gz", "wb", mtime=0) as f:
            f.write(text.encode())
        # The values as a reader gets them back: the printed digits, kept in float32.
        back = np.array([float(x) for x in text.split("\n", 6 + mol.natm)[-1].split()], dtype=np.float32)
        back = back.reshape(dims)
        assert not np.any(back == ISO)
        pts = crossings(origin, spacing, back)
        v = potential(mol, dm, pts)
        lines = [
            f"# {name}: PySCF 2.14 electrostatic potential (cubegen.mep's integrals) at the {len(pts)} crossings",
            f"# of the {ISO} bohr^-3 isosurface with the edges of {name}.density_lattice.cube.gz",
            f"# lattice {dims[0]}x{dims[1]}x{dims[2]}, {spacing_a} Angstrom apart",
            "# columns: x y z (Angstrom) V (hartree/e)",
        ]
        write_points(f"{name}.vertex_esp.txt.gz", lines, pts, v)
        print(name, dims, len(pts), v.min(), v.max())


if __name__ == "__main__":
    main()
