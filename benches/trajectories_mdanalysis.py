"""MDAnalysis timings for the same work as benches/trajectories.rs (the peer figures in RESULTS.md).

    OMP_NUM_THREADS=1 python benches/trajectories_mdanalysis.py [NAME-PREFIX ...]

(with prefixes, only the cases whose names start with one of them, e.g. `netcdf`)

Run the Rust benchmark first: it writes the AMBER NetCDF, TRR and LAMMPS dump files this script
reads from target/bench-data/ (adk_dims: 3341 atoms, 98 frames; adk_oplsaa: 47681 atoms, 10
frames).

Reads every frame in order and in the same shuffled order as the Rust benchmark, touching the
positions of each frame, on the universe opened once (as the Rust reader is opened once); also
open + all frames. Prints the median of several repeats, per pass and per frame.
"""

import os
import statistics
import sys
import time
import warnings

import MDAnalysis as mda

warnings.filterwarnings("ignore")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "md")


def shuffled(n):
    from math import gcd

    stride = next((s for s in range(n - 1, 0, -1) if gcd(s, n) == 1 and s * 3 > n * 2), 1)
    return [(i * stride + 7) % n for i in range(n)]


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(name, top, traj, repeats, **kw):
    only = sys.argv[1:]
    if only and not any(name.startswith(p) for p in only):
        return
    u = mda.Universe(os.path.join(DATA, top), os.path.join(DATA, traj), **kw)
    n = len(u.trajectory)
    order = shuffled(n)

    def in_order():
        s = 0.0
        for ts in u.trajectory:
            s += ts.positions[0, 0]
        return s

    def random_access():
        s = 0.0
        for i in order:
            s += u.trajectory[i].positions[0, 0]
        return s

    def open_and_read():
        v = mda.Universe(os.path.join(DATA, top), os.path.join(DATA, traj), **kw)
        return sum(ts.positions[0, 0] for ts in v.trajectory)

    for label, fn in [("all frames", in_order), ("random access", random_access)]:
        t = median_time(fn, repeats)
        print(f"{name}: {label}: {t * 1e3:.3f} ms per pass, {t / n * 1e6:.1f} us per frame ({n} frames)")
    t = median_time(open_and_read, max(3, min(10, repeats // 4)))
    print(f"{name}: universe + all frames (includes topology parsing): {t * 1e3:.1f} ms")
    if traj.endswith(".nc"):
        from MDAnalysis.coordinates.TRJ import NCDFReader

        def open_reader():
            r = NCDFReader(os.path.join(DATA, traj))
            r.close()

        t = median_time(open_reader, repeats)
        print(f"{name}: open (NCDFReader alone, reads frame 0): {t * 1e6:.1f} us")


if __name__ == "__main__":
    print(f"MDAnalysis {mda.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    bench("dcd adk_dims", "adk.psf", "adk_dims.dcd", 20)
    bench("xtc adk_oplsaa", "adk_oplsaa.gro", "adk_oplsaa.xtc", 20)
    bench("netcdf tz2.truncoct", "amber/tz2.truncoct.parm7.bz2", "amber/tz2.truncoct.nc", 201)
    generated = os.path.join(DATA, "..", "..", "..", "target", "bench-data")
    tops = {"adk_dims": "adk.psf", "adk_oplsaa": "adk_oplsaa.gro"}
    for stem, top in tops.items():
        if not os.path.exists(os.path.join(generated, f"{stem}.nc")):
            print("no target/bench-data: run `cargo bench --bench trajectories` first for NetCDF, TRR and LAMMPS dump")
            break
        bench(f"netcdf {stem}", top, os.path.join(generated, f"{stem}.nc"), 201)
        bench(f"trr {stem}", top, os.path.join(generated, f"{stem}.trr"), 20)
        bench(f"lammps dump {stem}", top, os.path.join(generated, f"{stem}.lammpstrj"), 5, format="LAMMPSDUMP")
