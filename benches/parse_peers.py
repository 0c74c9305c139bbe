"""Peer timings for benches/parse.rs: MDAnalysis 2.11.0 and gemmi 0.7.5 reading the same files.

Builds the same synthetic files as the Rust benchmark (replicated in memory, written to a temporary
folder), then times each reader single-threaded: best of N runs, MB/s = file bytes / seconds.

    OMP_NUM_THREADS=1 /tmp/venv/bin/python benches/parse_peers.py
"""

import os
import tempfile
import time
import warnings

import gemmi
import MDAnalysis as mda

warnings.filterwarnings("ignore")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "md")


def best(fn, repeat):
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def synthetic_pdb(copies):
    lines = open(os.path.join(DATA, "nmr_neopetrosiamide.pdb"), "rb").read().split(b"\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(b"MODEL")) + 1
    atoms = []
    for l in lines[start:]:
        if l.startswith(b"ENDMDL"):
            break
        if l.startswith(b"ATOM") or l.startswith(b"HETATM"):
            atoms.append(l)
    body = b"\n".join(atoms) + b"\n"
    return b"CRYST1  100.000  100.000  100.000  90.00  90.00  90.00 P 1           1\n" + body * copies + b"END\n"


def synthetic_gro(copies):
    lines = [l for l in open(os.path.join(DATA, "adk_oplsaa.gro"), "rb").read().split(b"\n") if l]
    atoms, box = lines[2:-1], lines[-1]
    body = b"\n".join(atoms) + b"\n"
    return b"replicated adk_oplsaa\n" + f"{len(atoms) * copies}\n".encode() + body * copies + box + b"\n"


def main():
    tmp = tempfile.mkdtemp()
    big_pdb = os.path.join(tmp, "synthetic_250k_atoms.pdb")
    open(big_pdb, "wb").write(synthetic_pdb(640))
    big_gro = os.path.join(tmp, "synthetic_238k_atoms.gro")
    open(big_gro, "wb").write(synthetic_gro(5))
    cases = [
        ("MDAnalysis", "nmr_neopetrosiamide.pdb", lambda f: mda.Universe(f), 3),
        ("MDAnalysis", "adk_open.pqr", lambda f: mda.Universe(f), 3),
        ("MDAnalysis", "adk.psf", lambda f: mda.Universe(f), 3),
        ("MDAnalysis", "adk_oplsaa.gro", lambda f: mda.Universe(f), 3),
        ("MDAnalysis", "2r9r-1b.xyz", lambda f: mda.Universe(f), 3),
        ("MDAnalysis", big_pdb, lambda f: mda.Universe(f), 1),
        ("MDAnalysis", big_gro, lambda f: mda.Universe(f), 1),
        ("gemmi", "nmr_neopetrosiamide.pdb", lambda f: gemmi.read_structure(f), 5),
        ("gemmi", "nmr_neopetrosiamide.cif", lambda f: gemmi.read_structure(f), 5),
        ("gemmi", big_pdb, lambda f: gemmi.read_structure(f), 3),
    ]
    for tool, name, fn, repeat in cases:
        path = name if os.path.isabs(name) else os.path.join(DATA, name)
        size = os.path.getsize(path)
        t = best(lambda: fn(path), repeat)
        print(f"{tool:11s} {os.path.basename(path):28s} {size / 1e6:7.2f} MB {t * 1e3:9.1f} ms {size / 1e6 / t:8.1f} MB/s")


if __name__ == "__main__":
    main()
