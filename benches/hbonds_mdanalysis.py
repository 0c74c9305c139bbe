"""The peer of `orbitfield hbonds` in benches/RESULTS.md ("Hydrogen bonds over a trajectory"):
MDAnalysis's HydrogenBondAnalysis on solvated adk (tests/data/md/adk_oplsaa.gro + .xtc, 10
frames), the same criteria and atoms as `orbitfield hbonds --per-frame`; prints the analysis's
time (the Universe's loading excluded) and the bonds found. Run from the repository root with
MDAnalysis 2.11 installed: `OMP_NUM_THREADS=1 python benches/hbonds_mdanalysis.py`.
"""
import sys, time, warnings
warnings.filterwarnings("ignore")
import MDAnalysis as mda
from MDAnalysis.analysis.hydrogenbonds import HydrogenBondAnalysis
u = mda.Universe("tests/data/md/adk_oplsaa.gro", "tests/data/md/adk_oplsaa.xtc")
polar = "(name N* O*) and not resname NA CL SOD CLA POT K"
t0 = time.perf_counter()
h = HydrogenBondAnalysis(u, donors_sel=polar, hydrogens_sel="name H*", acceptors_sel=polar, d_a_cutoff=3.0, d_h_a_angle_cutoff=150.0, d_h_cutoff=1.2)
h.run()
t1 = time.perf_counter()
print(f"mdanalysis {t1-t0:.3f} s, {len(h.results.hbonds)} bonds over {len(u.trajectory)} frames")
