#!/usr/bin/env python3
"""Makes the APBS reference potentials that tests/pb_apbs.rs compares with.

For each protein: writes the APBS 3.4 input (`NAME.in`, mg-manual on the lattice below, with the
model orbitfield's `compute::pb` uses by default: linearized PBE, smoothed molecular surface
`srfm smol`, probe 1.4 A, `chgm spl2`, `bcfl sdh`, eps 2 / 78.54, one +1 and one -1 ion species of
radius 2.0 A at 0.15 M, 298.15 K), runs `apbs` on it, and keeps the potential at sample lattice
points 1.5-6 A outside the van der Waals surface (and at least 3 spacings inside the lattice
faces) in `NAME.samples.txt.gz`: a header naming the lattice, then `i j k u` lines (lattice
indices, x fastest, potential in kT/e as APBS writes it). The full APBS map is not kept.

Usage: python3 make_apbs.py [APBS] (from any directory; needs numpy and gzip'ed PQR files next
to this script; APBS defaults to `apbs` on PATH). Reproduces the committed files exactly for
the same APBS build.
"""

import glob
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name, PQR (gzip), points per axis, spacing (A), number of sample points
PROTEINS = [
    ("adk_open", "adk_open.pqr.gz", 97, 0.8, 1500),
    ("hca", "hca.pqr.gz", 97, 0.8, 1500),
    ("actin", "actin_mol1.pqr.gz", 97, 1.0, 1500),
]

APBS_INPUT = """read
    mol pqr {pqr}
end
elec name pot
    mg-manual
    dime {n} {n} {n}
    glen {glen:.6f} {glen:.6f} {glen:.6f}
    gcent {cx:.6f} {cy:.6f} {cz:.6f}
    mol 1
    lpbe
    bcfl sdh
    pdie 2.0
    sdie 78.54
    ion charge 1 conc 0.15 radius 2.0
    ion charge -1 conc 0.15 radius 2.0
    chgm spl2
    srfm smol
    srad 1.4
    swin 0.3
    sdens 10.0
    temp 298.15
    calcenergy no
    calcforce no
    write pot dx {out}
end
quit
"""


def read_pqr(text):
    """Positions, charges, radii: the last five fields of ATOM/HETATM lines."""
    xyz, q, r = [], [], []
    for line in text.splitlines():
        if line.startswith(("ATOM", "HETATM")):
            f = line.split()
            xyz.append([float(v) for v in f[-5:-2]])
            q.append(float(f[-2]))
            r.append(float(f[-1]))
    return np.array(xyz), np.array(q), np.array(r)


def read_dx(path):
    with open(path) as fh:
        lines = fh.readlines()
    counts = origin = None
    delta = []
    values = []
    in_data = False
    for line in lines:
        if line.startswith("#"):
            continue
        if line.startswith("object 1"):
            counts = [int(v) for v in line.split()[-3:]]
        elif line.startswith("origin"):
            origin = [float(v) for v in line.split()[1:4]]
        elif line.startswith("delta"):
            delta.append([float(v) for v in line.split()[1:4]])
        elif line.startswith("object 3"):
            in_data = True
        elif in_data:
            if line.startswith(("attribute", "object", "component")):
                in_data = False
                continue
            values.extend(float(v) for v in line.split())
    nx, ny, nz = counts
    # DX data: z fastest.
    u = np.array(values).reshape(nx, ny, nz)
    return np.array(origin), np.array(delta), u


def main():
    apbs = sys.argv[1] if len(sys.argv) > 1 else "apbs"
    rng = np.random.default_rng(33)
    for name, pqr_gz, n, h, n_samples in PROTEINS:
        text = gzip.open(os.path.join(HERE, pqr_gz), "rt").read()
        xyz, q, rad = read_pqr(text)
        centre = np.round(0.5 * (xyz.min(0) + xyz.max(0)), 4)
        glen = h * (n - 1)
        origin = centre - 0.5 * glen
        with tempfile.TemporaryDirectory() as tmp:
            pqr = os.path.join(tmp, name + ".pqr")
            with open(pqr, "w") as fh:
                fh.write(text)
            inp = APBS_INPUT.format(
                pqr=name + ".pqr", n=n, glen=glen, cx=centre[0], cy=centre[1], cz=centre[2], out=name + "_pot"
            )
            with open(os.path.join(HERE, name + ".in"), "w") as fh:
                fh.write(inp)
            with open(os.path.join(tmp, name + ".in"), "w") as fh:
                fh.write(inp)
            subprocess.run([apbs, name + ".in"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
            # Some APBS builds append -PE0 (the process number) to the name.
            (dx,) = glob.glob(os.path.join(tmp, name + "_pot*.dx"))
            dx_origin, delta, u = read_dx(dx)
        assert np.allclose(dx_origin, origin, atol=1e-4), (dx_origin, origin)
        assert np.allclose(np.diag(delta), h, atol=1e-6), delta
        # Distance of every lattice point to the van der Waals surface.
        g = origin[None, :] + h * np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), -1).reshape(-1, 3)
        dist = np.full(g.shape[0], np.inf)
        idx = np.arange(n)
        for a, r in zip(xyz, rad):
            lo = np.clip(np.floor((a - r - 6.5 - origin) / h).astype(int), 0, n - 1)
            hi = np.clip(np.ceil((a + r + 6.5 - origin) / h).astype(int), 0, n - 1)
            ii, jj, kk = np.meshgrid(idx[lo[0] : hi[0] + 1], idx[lo[1] : hi[1] + 1], idx[lo[2] : hi[2] + 1], indexing="ij")
            flat = (ii * n * n + jj * n + kk).ravel()
            d = np.linalg.norm(g[flat] - a, axis=1) - r
            dist[flat] = np.minimum(dist[flat], d)
        ijk = np.stack(np.meshgrid(idx, idx, idx, indexing="ij"), -1).reshape(-1, 3)
        inside = np.all((ijk >= 3) & (ijk <= n - 4), axis=1)
        cand = np.nonzero(inside & (dist >= 1.5) & (dist <= 6.0))[0]
        pick = np.sort(rng.choice(cand, size=min(n_samples, cand.size), replace=False))
        with gzip.GzipFile(os.path.join(HERE, name + ".samples.txt.gz"), "wb", mtime=0) as gz:
            out = [
                f"# APBS 3.4 potential (kT/e) of {pqr_gz} from {name}.in\n",
                f"# lattice {n} {n} {n} spacing {h:.6f} origin {origin[0]:.6f} {origin[1]:.6f} {origin[2]:.6f}\n",
                "# i j k u (x index first; points 1.5-6 A outside the van der Waals surface)\n",
            ]
            for p in pick:
                i, j, k = ijk[p]
                out.append(f"{i} {j} {k} {u[i, j, k]:.6e}\n")
            gz.write("".join(out).encode())
        print(f"{name}: {len(xyz)} atoms, {cand.size} candidate points, {pick.size} kept, "
              f"u in [{u.min():.2f}, {u.max():.2f}] kT/e")


if __name__ == "__main__":
    main()
