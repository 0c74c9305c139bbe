"""Times scikit-image's marching_cubes(method='lorensen') on the 128^3 fields of benches/marching_cubes.rs.

Run with OMP_NUM_THREADS=1 on an otherwise idle machine:  python3 time_skimage.py
Prints, per field, the median and best of repeated runs and the vertex and face counts.
"""

import time

import numpy as np
import skimage
from skimage.measure import marching_cubes

N = 128


def fields():
    k, j, i = np.meshgrid(np.arange(N), np.arange(N), np.arange(N), indexing="ij")
    c = (N - 1) / 2
    r2 = (i - c) ** 2 + (j - c) ** 2 + (k - c) ** 2
    # Small surface: a sphere of radius 20 lattice steps.
    sphere = (20.0**2 - r2).astype(np.float32)
    # Large surface: a gyroid with a period of 21 lattice steps.
    a = 2 * np.pi / 21.0
    gyroid = (np.sin(a * i) * np.cos(a * j) + np.sin(a * j) * np.cos(a * k) + np.sin(a * k) * np.cos(a * i)).astype(
        np.float32
    )
    return [("sphere_r20_128", sphere, 0.0), ("gyroid_p21_128", gyroid, 0.0)]


def main():
    print(f"scikit-image {skimage.__version__}, numpy {np.__version__}")
    for name, vol, level in fields():
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            verts, faces, _, _ = marching_cubes(vol, level=level, method="lorensen")
            times.append(time.perf_counter() - t0)
        times.sort()
        print(
            f"{name}: median {1e3 * times[len(times) // 2]:.1f} ms, best {1e3 * times[0]:.1f} ms, "
            f"{len(verts)} vertices, {len(faces)} faces"
        )


if __name__ == "__main__":
    main()
