"""Writes water_mep_24.cube: PySCF cubegen's molecular electrostatic potential (nuclei plus
electrons, hartree/e) of the spherical 6-31G* water HF wavefunction, on the same 24^3 lattice
(3-bohr margin) as water_density_24.cube."""
import sys
from pyscf.tools import molden, cubegen

mol, mo_energy, mo_coeff, mo_occ, _, _ = molden.load(sys.argv[1])
dm = (mo_coeff * mo_occ) @ mo_coeff.T
cubegen.mep(mol, sys.argv[2], dm, nx=24, ny=24, nz=24)
