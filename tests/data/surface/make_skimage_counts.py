"""Writes scikit-image's marching-cubes counts for the lattices that tests/marching_cubes.rs rebuilds.

Every lattice holds small integers (exact in f32 and f64), and every level is a half-integer, so no
value ever equals the level and both programs classify every point identically. Arrays are indexed
[k, j, i] (C order, x fastest), the same memory layout as orbitfield's Grid3.

Run:  python3 make_skimage_counts.py  (needs numpy and scikit-image; writes skimage_counts.json)
"""

import json

import numpy as np
import skimage
from skimage.measure import marching_cubes

MASK = (1 << 64) - 1


def lcg_ints(n, seed, lo, hi):
    """n integers in [lo, hi] from a 64-bit LCG (Knuth's MMIX constants), top bits."""
    x = seed & MASK
    out = np.empty(n, dtype=np.int64)
    span = hi - lo + 1
    for t in range(n):
        x = (6364136223846793005 * x + 1442695040888963407) & MASK
        out[t] = lo + ((x >> 33) % span)
    return out


def noise(dims, seed, lo, hi):
    nx, ny, nz = dims
    return lcg_ints(nx * ny * nz, seed, lo, hi).reshape(nz, ny, nx)


def coords(dims):
    nx, ny, nz = dims
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return i.astype(np.int64), j.astype(np.int64), k.astype(np.int64)


def ellipsoid(dims, centre2, weights):
    """sum_w w * (2*idx - centre2)^2: integer-valued, centre at half-integer positions allowed."""
    i, j, k = coords(dims)
    return weights[0] * (2 * i - centre2[0]) ** 2 + weights[1] * (2 * j - centre2[1]) ** 2 + weights[2] * (2 * k - centre2[2]) ** 2


def torus(dims, big, small):
    """(x^2+y^2+z^2+R^2-r^2)^2 - 4 R^2 (x^2+y^2) with doubled, centred integer coordinates."""
    nx, ny, nz = dims
    i, j, k = coords(dims)
    x, y, z = 2 * i - (nx - 1), 2 * j - (ny - 1), 2 * k - (nz - 1)
    s = x * x + y * y + z * z + big * big - small * small
    return s * s - 4 * big * big * (x * x + y * y)


def lattices():
    """(name, dims (nx, ny, nz), level, array[k, j, i]) in the order the Rust test expects."""
    out = []
    out.append(("noise_17x13x11", (17, 13, 11), 0.5, noise((17, 13, 11), 1, -100, 100)))
    out.append(("noise_32x32x32_small_range", (32, 32, 32), 0.5, noise((32, 32, 32), 7, -2, 3)))
    out.append(("noise_9x24x16_binary", (9, 24, 16), 0.5, noise((9, 24, 16), 42, 0, 1)))
    out.append(("sphere_40", (40, 40, 40), 900.5, ellipsoid((40, 40, 40), (39, 39, 39), (1, 1, 1))))
    out.append(("ellipsoid_30x25x20", (30, 25, 20), 1600.5, ellipsoid((30, 25, 20), (28, 25, 19), (4, 9, 16))))
    out.append(("torus_48x48x24", (48, 48, 24), 0.5, torus((48, 48, 24), 28, 12)))
    return out


def read_cube(path):
    """Values of a Gaussian cube file as array[k, j, i] (the file stores z fastest)."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    n_atoms = abs(int(lines[2].split()[0]))
    dims = [abs(int(lines[3 + a].split()[0])) for a in range(3)]
    data = np.array(" ".join(lines[6 + n_atoms :]).split(), dtype=np.float64)
    return data.reshape(dims[0], dims[1], dims[2]).transpose(2, 1, 0)


CUBE = "water_homo_24.cube"
CUBE_LEVEL = 0.05


def count(volume, level):
    try:
        verts, faces, _, _ = marching_cubes(volume.astype(np.float32), level=level, method="lorensen")
    except (RuntimeError, ValueError):
        return 0, 0
    return int(len(verts)), int(len(faces))


def main():
    cells = []
    for case in range(256):
        cube = np.zeros((2, 2, 2), dtype=np.int64)
        for c in range(8):
            i, j, k = c & 1, (c >> 1) & 1, (c >> 2) & 1
            cube[k, j, i] = 1 if case & (1 << c) else -1
        v, f = count(cube, 0.0)
        cells.append({"case": case, "vertices": v, "faces": f})
    result = {
        "generator": "tests/data/surface/make_skimage_counts.py",
        "scikit_image": skimage.__version__,
        "numpy": np.__version__,
        "method": "lorensen",
        "cells": cells,
        "lattices": [],
    }
    for name, dims, level, arr in lattices():
        v, f = count(arr, level)
        result["lattices"].append({"name": name, "dims": list(dims), "level": level, "vertices": v, "faces": f})
    # The water HOMO cube (PySCF): the positive lobe at +level, the negative lobe as -values at +level.
    homo = read_cube(CUBE).astype(np.float32)
    vp, fp = count(homo, CUBE_LEVEL)
    vn, fn = count(-homo, CUBE_LEVEL)
    result["cube"] = {
        "file": CUBE,
        "level": CUBE_LEVEL,
        "positive": {"vertices": vp, "faces": fp},
        "negative": {"vertices": vn, "faces": fn},
    }
    with open("skimage_counts.json", "w") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
