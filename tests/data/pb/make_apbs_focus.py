#!/usr/bin/env python3
"""Makes the APBS focusing (mg-auto) references that tests/pb_focus.rs compares with.

For each protein: writes the APBS 3.4 input (`NAME_focus.in`, `mg-auto` from the coarse lattice
below to the fine one, with the model of make_apbs.py: linearized PBE, `srfm smol`, probe 1.4 A,
`chgm spl2`, `bcfl sdh` on the coarse lattice, eps 2 / 78.54, one +1 and one -1 ion species of
radius 2.0 A at 0.15 M, 298.15 K), runs `apbs` on it, and keeps the potential of the finest level
(the map APBS writes) at sample lattice points 1.5-6 A outside the van der Waals surface (and at
least 3 spacings inside the fine lattice's faces) in `NAME_focus.samples.txt.gz`: a header naming
the fine and the coarse lattices, then `i j k u` lines (fine lattice indices, x fastest, potential
in kT/e as APBS writes it).

APBS chooses the focusing levels itself (NOsh_setupCalcMGAUTO: the spacing reduced by at most a
factor 4 per level): actin takes two levels, adk (coarse 300 A) three.

Usage: python3 make_apbs_focus.py [APBS] (from any directory; needs numpy; APBS defaults to
`apbs` on PATH). Reproduces the committed files exactly for the same APBS build.
"""

import glob
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

from make_apbs import HERE, read_dx, read_pqr

# name, PQR (gzip), points per axis (every level), coarse spacing (A), coarse centre offset from
# the molecule's centre (A), fine spacing (A), number of sample points
PROTEINS = [
    ("actin", "actin_mol1.pqr.gz", 97, 1.25, (0.0, 0.0, 0.0), 0.9, 1500),
    ("adk_open", "adk_open.pqr.gz", 97, 3.125, (12.5, -7.25, 4.0), 0.75, 1500),
]

APBS_INPUT = """read
    mol pqr {pqr}
end
elec name pot
    mg-auto
    dime {n} {n} {n}
    cglen {cglen:.6f} {cglen:.6f} {cglen:.6f}
    cgcent {ccx:.6f} {ccy:.6f} {ccz:.6f}
    fglen {fglen:.6f} {fglen:.6f} {fglen:.6f}
    fgcent {fcx:.6f} {fcy:.6f} {fcz:.6f}
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


def main():
    apbs = sys.argv[1] if len(sys.argv) > 1 else "apbs"
    rng = np.random.default_rng(3333)
    for name, pqr_gz, n, hc, offset, h, n_samples in PROTEINS:
        text = gzip.open(os.path.join(HERE, pqr_gz), "rt").read()
        xyz, q, rad = read_pqr(text)
        centre = np.round(0.5 * (xyz.min(0) + xyz.max(0)), 4)
        ccentre = centre + np.array(offset)
        glen = h * (n - 1)
        cglen = hc * (n - 1)
        origin = centre - 0.5 * glen
        corigin = ccentre - 0.5 * cglen
        tag = name + "_focus"
        with tempfile.TemporaryDirectory() as tmp:
            pqr = os.path.join(tmp, name + ".pqr")
            with open(pqr, "w") as fh:
                fh.write(text)
            inp = APBS_INPUT.format(
                pqr=name + ".pqr",
                n=n,
                cglen=cglen,
                ccx=ccentre[0],
                ccy=ccentre[1],
                ccz=ccentre[2],
                fglen=glen,
                fcx=centre[0],
                fcy=centre[1],
                fcz=centre[2],
                out=tag + "_pot",
            )
            with open(os.path.join(HERE, tag + ".in"), "w") as fh:
                fh.write(inp)
            with open(os.path.join(tmp, tag + ".in"), "w") as fh:
                fh.write(inp)
            log = subprocess.run([apbs, tag + ".in"], cwd=tmp, check=True, capture_output=True, text=True)
            with open(os.path.join(tmp, "io.mc")) as fh:
                levels = [l for l in fh.read().splitlines() + log.stdout.splitlines() if "levels of focusing" in l]
            # Some APBS builds append -PE0 (the process number) to the name.
            (dx,) = glob.glob(os.path.join(tmp, tag + "_pot*.dx"))
            dx_origin, delta, u = read_dx(dx)
        assert np.allclose(dx_origin, origin, atol=1e-4), (dx_origin, origin)
        assert np.allclose(np.diag(delta), h, atol=1e-6), delta
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
        with gzip.GzipFile(os.path.join(HERE, tag + ".samples.txt.gz"), "wb", mtime=0) as gz:
            out = [
                f"# APBS 3.4 mg-auto potential (kT/e) of {pqr_gz} from {tag}.in, finest level\n",
                f"# lattice {n} {n} {n} spacing {h:.6f} origin {origin[0]:.6f} {origin[1]:.6f} {origin[2]:.6f}\n",
                f"# coarse {n} {n} {n} spacing {hc:.6f} origin {corigin[0]:.6f} {corigin[1]:.6f} {corigin[2]:.6f}\n",
                f"# APBS: {levels[0].strip() if levels else 'levels not reported'}\n",
                "# i j k u (x index first; points 1.5-6 A outside the van der Waals surface)\n",
            ]
            for p in pick:
                i, j, k = ijk[p]
                out.append(f"{i} {j} {k} {u[i, j, k]:.6e}\n")
            gz.write("".join(out).encode())
        print(f"{name}: {len(xyz)} atoms, {levels}, {cand.size} candidate points, {pick.size} kept, "
              f"u in [{u.min():.2f}, {u.max():.2f}] kT/e")


if __name__ == "__main__":
    main()
