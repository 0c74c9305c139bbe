"""Independent check of orbitfield's DX and cube output with gridDataFormats (MDAnalysis project).

Usage: python check_griddata.py OURS.dx OURS.cube PYSCF.cube
  OURS.dx / OURS.cube: `orbitfield grid` output of the same field on the same lattice;
  PYSCF.cube: PySCF's cube of that field (bohr), read here with a small parser of this script.
Run `orbitfield grid FIELD MOLDEN -o OURS.dx --like PYSCF.cube` (and the same with OURS.cube).
PySCF's header prints its lattice to 6 decimals, so `--like` evaluates on a lattice up to 5e-7 bohr
off PySCF's own: values then agree to 1e-5 (orbital) .. 5e-5 (density near nuclei), not to the 1e-6 that the Rust test
(tests/cube_dx.rs, which rebuilds PySCF's exact lattice) shows.
Prints the checks and exits non-zero when one fails.
"""
import sys

import numpy as np
from gridData import Grid

BOHR_IN_ANGSTROM = 0.52917721092


def read_cube(path):
    with open(path) as f:
        lines = f.readlines()
    natoms, *origin = lines[2].split()[:4]
    natoms = int(natoms)
    dims, steps = [], []
    for line in lines[3:6]:
        n, *v = line.split()
        dims.append(abs(int(n)))
        steps.append([float(x) for x in v])
    unit = BOHR_IN_ANGSTROM if int(lines[3].split()[0]) > 0 else 1.0
    start = 6 + abs(natoms) + (1 if natoms < 0 else 0)
    values = np.array(" ".join(lines[start:]).split(), dtype=float).reshape(dims)
    return np.array(origin, dtype=float) * unit, np.array(steps) * unit, values


def main():
    ours_dx, ours_cube, pyscf_cube = sys.argv[1:4]
    ok = True

    def check(name, cond, detail):
        nonlocal ok
        ok &= bool(cond)
        print(f"{'PASS' if cond else 'FAIL'} {name}: {detail}")

    g = Grid(ours_dx)
    o_ref, s_ref, v_ref = read_cube(pyscf_cube)
    o_cub, s_cub, v_cub = read_cube(ours_cube)
    check("dx grid shape", g.grid.shape == v_ref.shape, f"{g.grid.shape} vs {v_ref.shape}")
    check("dx origin (Angstrom)", np.allclose(g.origin, o_ref, atol=1e-6), f"{g.origin} vs {o_ref}")
    check("dx spacing (Angstrom)", np.allclose(g.delta, np.diag(s_ref), atol=1e-6), f"{g.delta} vs {np.diag(s_ref)}")
    sign = np.sign(np.sum(g.grid * v_ref))
    rel = np.linalg.norm(sign * g.grid - v_ref) / np.linalg.norm(v_ref)
    check("dx values vs PySCF cube (header-rounded lattice)", rel < 1e-4, f"relative 2-norm difference {rel:.2e}")
    rel_c = np.linalg.norm(sign * v_cub - v_ref) / np.linalg.norm(v_ref)
    check("our cube values vs PySCF cube (header-rounded lattice)", rel_c < 1e-4, f"relative 2-norm difference {rel_c:.2e}")
    check("our cube lattice", np.allclose(o_cub, o_ref, atol=1e-6) and np.allclose(s_cub, s_ref, atol=1e-6), "origin and steps")
    rel_dc = np.linalg.norm(g.grid - v_cub) / np.linalg.norm(v_cub)
    check("dx (read by gridData) vs our cube (6 digits)", rel_dc < 5e-6, f"relative 2-norm difference {rel_dc:.2e}")
    # gridData interpolates at a point: the DX's own value at a lattice point comes back.
    p = g.origin + g.delta * np.array([5, 7, 9])
    check("dx value at a lattice point", np.isclose(g.interpolated(*p)[0] if np.ndim(g.interpolated(*p)) else g.interpolated(*p), g.grid[5, 7, 9], rtol=1e-5, atol=1e-12), f"{g.grid[5, 7, 9]:.6e}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
