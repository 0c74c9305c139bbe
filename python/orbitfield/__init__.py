"""orbitfield from Python: read structures, trajectories and wavefunctions, and compute orbitals,
densities, molecular surfaces and electrostatic potentials on lattices or at points into numpy
arrays, on a CUDA GPU when one is present and on all CPU cores otherwise.

Field names are those of the command line (``orbitfield grid FIELD ...``): ``mo:homo``,
``mo:lumo+1``, ``mo:homo-2``, ``mo:12`` (1-based), ``mo:beta:homo``, ``mo2:homo`` (|psi|^2),
``density``, ``spin``, ``esp`` and ``molsurf``.

Example::

    import orbitfield
    water = orbitfield.load("water.molden")
    homo = water.grid("mo:homo", spacing=0.2)
    print(homo.values.shape, homo.values.max())
    homo.write("homo.cube")

    adk = orbitfield.load("adk.psf", "adk.dcd")
    esp = adk.grid("esp", frame=3, spacing=1.0)      # kT/e at 300 K, as `orbitfield grid esp`

Every error is an :class:`OrbitfieldError` (a ``ValueError``) with the message the command line
prints.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import OrbitfieldError

__all__ = [
    "OrbitfieldError",
    "System",
    "Grid",
    "Frame",
    "load",
    "from_pyscf",
    "from_mdanalysis",
    "render",
    "run",
    "DEFAULT_SPACING_ANGSTROM",
    "DEFAULT_PADDING_ANGSTROM",
]

#: Default lattice spacing of :meth:`System.grid` (that of ``orbitfield grid``), Angstrom.
DEFAULT_SPACING_ANGSTROM: float = _native.DEFAULT_SPACING_ANGSTROM
#: Default padding around the atoms of :meth:`System.grid`, Angstrom.
DEFAULT_PADDING_ANGSTROM: float = _native.DEFAULT_PADDING_ANGSTROM
# `orbitfield grid ils --spacing`'s default, Angstrom.
ILS_SPACING_ANGSTROM: float = 1.0
#: Angstrom per bohr, the constant orbitfield converts with.
ANGSTROM_PER_BOHR: float = _native.ANGSTROM_PER_BOHR


@dataclass(frozen=True)
class Frame:
    """One frame of a system.

    ``positions_angstrom`` is a float64 array [n_atoms, 3]; ``cell`` is ``(lengths_angstrom,
    angles_degree)`` or None; ``time_ps`` the simulation time when the file gives one.
    """

    index: int
    positions_angstrom: np.ndarray
    cell: Optional[tuple]
    time_ps: Optional[float]


class Grid:
    """A field on a lattice.

    ``values`` is a float64 array [nx, ny, nz]: the value at point (i, j, k) is at
    ``origin_angstrom + i * axes_angstrom[0] + j * axes_angstrom[1] + k * axes_angstrom[2]``
    (:meth:`points_angstrom` gives every point's coordinates).

    Example::

        g = system.grid("mo:homo", spacing=0.25)
        g.values.shape, g.unit        # ((nx, ny, nz), 'bohr^-3/2')
        g.write("homo.cube")          # or .dx
    """

    def __init__(self, native: "_native.Grid"):
        self._g = native
        nx, ny, nz = native.dims
        flat = np.frombuffer(native.values_bytes(), dtype=np.float64)
        # The library stores x fastest: Fortran order of [nx, ny, nz].
        self.values: np.ndarray = flat.reshape((nx, ny, nz), order="F")
        self.origin_angstrom = np.array(native.origin_angstrom)
        self.axes_angstrom = np.array(native.axes_angstrom)
        self.origin_bohr = np.array(native.origin_bohr)
        self.axes_bohr = np.array(native.axes_bohr)
        self.unit: str = native.unit
        self.description: str = native.description

    @property
    def dims(self) -> tuple:
        """Points along the three axes."""
        return tuple(self._g.dims)

    def points_angstrom(self) -> np.ndarray:
        """Coordinates of every lattice point, float64 [nx, ny, nz, 3], Angstrom."""
        return _lattice_points(self.origin_angstrom, self.axes_angstrom, self.dims)

    def points_bohr(self) -> np.ndarray:
        """Coordinates of every lattice point, float64 [nx, ny, nz, 3], bohr."""
        return _lattice_points(self.origin_bohr, self.axes_bohr, self.dims)

    def write(self, path: Union[str, os.PathLike]) -> None:
        """Writes a Gaussian cube (``.cube``, bohr) or OpenDX (``.dx``, Angstrom) file."""
        self._g.write(os.fspath(path))

    def __repr__(self) -> str:
        return f"Grid({self.description!r}, dims={self.dims}, unit={self.unit!r})"


def _lattice_points(origin, axes, dims) -> np.ndarray:
    i, j, k = (np.arange(n, dtype=np.float64) for n in dims)
    return (
        origin[None, None, None, :]
        + i[:, None, None, None] * axes[0][None, None, None, :]
        + j[None, :, None, None] * axes[1][None, None, None, :]
        + k[None, None, :, None] * axes[2][None, None, None, :]
    )


class System:
    """Files (or arrays) that together form one system: a structure with its frames, or one or
    more wavefunctions.

    Example::

        s = orbitfield.load("adk.psf", "adk.dcd")
        s.n_atoms, s.n_frames
        s.frame(5).positions_angstrom        # float64 [n_atoms, 3]
        s.grid("esp", frame=5, spacing=1.0)   # a Grid, kT/e
        s.points("esp", [[0, 0, 0], [1, 2, 3]], frame=5)
        s.dssp(0)                             # 'CCEEEE...'
    """

    def __init__(self, native: "_native.System", paths: Sequence[str] = ()):
        self._s = native
        self.paths = [os.fspath(p) for p in paths]

    @property
    def n_frames(self) -> int:
        """Frames of the trajectory (or wavefunctions of a series)."""
        return self._s.n_frames

    @property
    def n_atoms(self) -> int:
        return self._s.n_atoms

    @property
    def numbers(self) -> np.ndarray:
        """Atomic numbers (0 where unknown)."""
        return np.array(self._s.numbers, dtype=np.int64)

    @property
    def names(self) -> list:
        """Atom names."""
        return self._s.names

    @property
    def resnames(self) -> list:
        """Residue names."""
        return self._s.resnames

    @property
    def resids(self) -> np.ndarray:
        """Residue numbers as the files give them."""
        return np.array(self._s.resids, dtype=np.int64)

    @property
    def chains(self) -> list:
        """Chain identifiers ("" where the files have none)."""
        return self._s.chains

    @property
    def segids(self) -> list:
        """Segment identifiers ("" where the files have none)."""
        return self._s.segids

    @property
    def types(self) -> Optional[list]:
        """Force-field atom types, or None when the files carry none."""
        return self._s.types

    @property
    def masses(self) -> np.ndarray:
        """Masses in dalton: the files' where they give them, else the element's standard mass."""
        return np.array(self._s.masses, dtype=np.float64)

    @property
    def radii(self) -> Optional[np.ndarray]:
        """Atomic radii in Angstrom (PQR, prmtop), or None when the files carry none."""
        r = self._s.radii
        return None if r is None else np.array(r, dtype=np.float64)

    @property
    def bfactors(self) -> Optional[np.ndarray]:
        """B-factors in Angstrom^2, or None when the files carry none."""
        b = self._s.bfactors
        return None if b is None else np.array(b, dtype=np.float64)

    @property
    def occupancies(self) -> Optional[np.ndarray]:
        """Occupancies (0 to 1), or None when the files carry none."""
        o = self._s.occupancies
        return None if o is None else np.array(o, dtype=np.float64)

    @property
    def bonds(self) -> np.ndarray:
        """Bonds as pairs of atom indices, int64 [n_bonds, 2]: the files' or guessed."""
        return np.array(self._s.bonds, dtype=np.int64).reshape((-1, 2))

    @property
    def charges(self) -> Optional[np.ndarray]:
        """Partial charges in e, or None when the files carry none."""
        q = self._s.charges
        return None if q is None else np.array(q, dtype=np.float64)

    @property
    def energies_hartree(self) -> Optional[np.ndarray]:
        """Each frame's total energy in hartree (NaN where a step printed none) when the frames are
        a QM log's steps (optimisation, scan, dynamics) or a series of wavefunctions with energies;
        None otherwise."""
        e = self._s.energies
        return None if e is None else np.array(e, dtype=np.float64)

    def orbitals(self, spin: str = "alpha", frame: int = 0):
        """The orbitals of the wavefunction of frame `frame` (a series' or a QM log's step's) in the
        spin channel `spin` ("alpha" or "beta"): a pair (energies in hartree, occupations) of
        float64 arrays in the file's order, orbital N of the `mo:N` field at index N-1; None
        without a wavefunction."""
        o = self._s.orbitals(spin, frame)
        if o is None:
            return None
        return np.array(o[0], dtype=np.float64), np.array(o[1], dtype=np.float64)

    @property
    def positions_angstrom(self) -> np.ndarray:
        """Positions of frame 0, float64 [n_atoms, 3] (see :meth:`frame` for others)."""
        return self.frame(0).positions_angstrom

    @property
    def warnings(self) -> list:
        """What the readers noticed while reading."""
        return self._s.warnings

    def frame(self, index: int) -> Frame:
        """Frame ``index`` (0-based; negative counts from the end)."""
        if index < 0:
            index += self.n_frames
        if index < 0:
            raise OrbitfieldError(f"frame index out of range (the system holds {self.n_frames} frames)")
        data, cell, time = self._s.frame_data(index)
        xyz = np.frombuffer(data, dtype=np.float64).reshape((-1, 3))
        return Frame(index=index, positions_angstrom=xyz, cell=cell, time_ps=time)

    def grid(
        self,
        field: str,
        spacing: Optional[float] = None,
        frame: int = 0,
        padding: Optional[float] = None,
        device: str = "auto",
        origin=None,
        dims=None,
        like=None,
        units: Optional[str] = None,
        temperature: Optional[float] = None,
        frames=None,
        focus: bool = False,
        fine_center=None,
        fine_length=None,
        fine_around: Optional[str] = None,
        coarse_center=None,
        coarse_length=None,
        coarse_spacing: Optional[float] = None,
    ) -> Grid:
        """The field on a lattice, as ``orbitfield grid FIELD FILES ... --frame F`` computes it.

        The lattice is placed around the field's atoms (``spacing`` and ``padding`` in Angstrom),
        or given: ``origin`` (Angstrom) with ``dims`` (points per axis) and ``spacing``, or
        ``like`` (a cube or DX file whose lattice to use). ``device``: ``"auto"`` (a CUDA GPU when
        present, else the CPU), ``"gpu"`` (fails without one) or ``"cpu"``; for ``"pb"`` also
        ``"wgpu"`` (a wgpu adapter, software ones included), and ``"gpu"``/``"auto"`` take a
        hardware wgpu adapter where CUDA has no device. Potentials (``esp``)
        come in ``units`` (``kT/e`` at ``temperature`` K for point charges: 300 K by default,
        298.15 K for ``"pb"`` as APBS;
        ``hartree/e`` for a wavefunction's own potential; also ``kcal/mol/e`` and ``V``).
        ``"ils:o2"`` (``xe``, ``co``, ``no``) is the implicit ligand sampling free energy (kT) of
        the probe over ``frames`` (all by default), as ``orbitfield grid ils FILES --probe o2``
        computes it (spacing 1 A and padding 2 A unless given; Lennard-Jones parameters from the
        files the system was loaded from).
        ``"pb"`` is the linearized Poisson-Boltzmann potential of the partial charges with the
        defaults of ``orbitfield grid pb`` (kT/e; at least 10 A of padding, multigrid point counts).
        ``focus=True`` focuses it as ``grid pb --focus`` (APBS's mg-auto): a coarse lattice around
        everything, then finer ones down to the returned lattice ``spacing`` apart, placed by
        ``fine_center`` (x, y, z), ``fine_length`` (one side, or three) or ``fine_around`` (a
        selection), with ``coarse_center``, ``coarse_length`` and ``coarse_spacing`` as the command's.

        Example::

            g = system.grid("mo:homo", spacing=0.2, padding=3.0)
            g = system.grid("esp", frame=2, spacing=1.0, units="kcal/mol/e")
            g = system.grid("pb", spacing=1.0)
            site = system.grid("pb", spacing=0.4, focus=True, fine_around="resid 60 to 70")
        """
        origin = None if origin is None else [float(x) for x in origin]
        dims = None if dims is None else [int(x) for x in dims]
        if field.strip().lower().startswith("ils:"):
            if like is not None or units is not None or temperature is not None:
                raise OrbitfieldError("ils maps take spacing, padding, frames, device, origin and dims")
            frames = None if frames is None else [int(f) for f in frames]
            spacing = ILS_SPACING_ANGSTROM if spacing is None else float(spacing)
            padding = None if padding is None else float(padding)
            return Grid(self._s.ils(field, self.paths, spacing, padding, frames, device, origin, dims))
        if frames is not None:
            raise OrbitfieldError("frames= applies to ils maps; other fields take one frame (frame=)")
        spacing = DEFAULT_SPACING_ANGSTROM if spacing is None else spacing
        padding = DEFAULT_PADDING_ANGSTROM if padding is None else padding
        like = None if like is None else os.fspath(like)
        def triple(v):
            return None if v is None else [float(x) for x in v]

        def lengths(v):
            if v is None:
                return None
            return [float(v)] if np.isscalar(v) else [float(x) for x in v]

        native = self._s.grid(
            field, float(spacing), float(padding), int(frame), device, origin, dims, like, units, temperature,
            bool(focus), triple(fine_center), lengths(fine_length), fine_around, triple(coarse_center),
            lengths(coarse_length), None if coarse_spacing is None else float(coarse_spacing),
        )
        return Grid(native)

    def points(
        self,
        field: str,
        xyz_angstrom,
        frame: int = 0,
        units: Optional[str] = None,
        temperature: Optional[float] = None,
    ) -> np.ndarray:
        """The field at arbitrary points (array-like [n, 3], Angstrom), float64 [n], by the exact
        CPU evaluator (as ``orbitfield points``).

        Example::

            system.points("mo:homo", [[0.0, 0.0, 0.5], [0.0, 0.0, 1.0]])
        """
        xyz = np.ascontiguousarray(xyz_angstrom, dtype=np.float64)
        if xyz.ndim == 1 and xyz.size == 3:
            xyz = xyz.reshape((1, 3))
        if xyz.ndim != 2 or xyz.shape[1] != 3:
            raise OrbitfieldError(f"points: expected an array of shape (n, 3), got {xyz.shape}")
        out = self._s.points(field, xyz.tobytes(), int(frame), units, temperature)
        return np.frombuffer(out, dtype=np.float64).copy()

    def rdf(self, sel1: str, sel2: str, r_max: float = 10.0, bins: int = 200, frames=None,
            exclude_same_residue: bool = False):
        """The radial distribution function g(r) of ``sel2`` around ``sel1`` (selection language, as
        ``orbitfield rdf --sel1 --sel2``) over ``frames`` (a list of indices; all without), with the
        minimum image in periodic boxes. Returns ``(r_angstrom, g, n_cumulative)`` as numpy arrays
        (bin centres; cumulative: average number of ``sel2`` atoms within r of a ``sel1`` atom).

        Example::

            r, g, n = water.rdf("name OH2", "name OH2", r_max=6.0, bins=60)
        """
        frames = None if frames is None else [int(f) for f in frames]
        r, g, n = self._s.rdf(sel1, sel2, float(r_max), int(bins), frames, bool(exclude_same_residue))
        return np.array(r), np.array(g), np.array(n)

    def hbonds(self, sel: str = "all", frame: int = 0, distance: float = 3.0, angle: float = 150.0,
               heavy_distance: float = 3.5):
        """Hydrogen bonds among the atoms of ``sel`` at ``frame`` (both partners in ``sel``), as the
        viewer's *Hydrogen bonds* style and ``orbitfield hbonds`` find them: donor-acceptor at most
        ``distance`` Angstrom and the donor-hydrogen-acceptor angle at least ``angle`` degrees
        (MDAnalysis's HydrogenBondAnalysis defaults); without hydrogens, N and O pairs within
        ``heavy_distance`` by residue and atom name. Periodic boxes by the minimum image. Returns an
        integer array of rows ``(donor, hydrogen, acceptor)``, 0-based, hydrogen -1 when the rule
        without hydrogens found the bond.

        Example::

            bonds = adk.hbonds("protein", frame=40)
        """
        rows = self._s.hbonds(sel, int(frame), float(distance), float(angle), float(heavy_distance))
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def rmsd(self, sel: str, reference: int = 0, fit: bool = True, frames=None):
        """The RMSD in Angstrom of the atoms of ``sel`` from frame ``reference`` at each of
        ``frames`` (a list of indices; all without): after the least-squares superposition of each
        frame onto the reference (``fit``, as MDAnalysis's ``rms.RMSD`` and VMD's RMSD tool), or as the
        frames stand.

        Example::

            rmsd = adk.rmsd("backbone")
        """
        frames = None if frames is None else [int(f) for f in frames]
        return np.array(self._s.rmsd(sel, int(reference), bool(fit), frames))

    def select(self, sel: str, frame: int = 0) -> np.ndarray:
        """The 0-based indices (int64) of the atoms the selection ``sel`` picks at ``frame``, in the
        viewer's selection language (``"protein and name CA"``, ``"within 5 of resid 12"``,
        ``"same residue as (water and within 3 of protein)"``).

        Example::

            ca = adk.select("name CA")
            adk.frame(3).positions_angstrom[ca]
        """
        return np.array(self._s.select(sel, int(frame)), dtype=np.int64)

    def rgyr(self, sel: str = "all", frames=None) -> np.ndarray:
        """The mass-weighted radius of gyration in Angstrom of the atoms of ``sel`` at each of
        ``frames`` (a list of indices; all without), as MDAnalysis's ``radius_of_gyration()`` and
        VMD's ``measure rgyr`` (with masses) give it.

        Example::

            rg = adk.rgyr("protein")
        """
        frames = None if frames is None else [int(f) for f in frames]
        return np.array(self._s.rgyr(sel, frames))

    def sasa(self, sel: str = "all", frames=None, probe: float = 1.4, n_points: int = 960,
             per_atom: bool = False) -> np.ndarray:
        """The solvent-accessible surface area in square Angstrom of the atoms of ``sel`` at each of
        ``frames`` (a list of indices; all without), by the Shrake-Rupley method: ``n_points``
        points per atom sphere on the golden-section spiral, a probe of ``probe`` Angstrom (water),
        Bondi radii, the selection its own environment (as VMD's ``measure sasa``; remove what
        should not block, such as water, by the selection). The total per frame, or with
        ``per_atom`` an array [n_frames, n_selected_atoms].

        Example::

            area = adk.sasa("protein")
        """
        frames = None if frames is None else [int(f) for f in frames]
        rows = self._s.sasa(sel, frames, float(probe), int(n_points))
        areas = np.array(rows, dtype=np.float64).reshape((len(rows), -1))
        return areas if per_atom else areas.sum(axis=1)

    def dssp(self, frame: int = 0) -> str:
        """DSSP secondary structure of the protein residues at ``frame``: one letter per residue
        (H alpha helix, G 3-10, I pi, P PPII, E strand, B bridge, T turn, S bend, '-' coil)."""
        return self._s.dssp(int(frame))

    def __repr__(self) -> str:
        return f"System(n_atoms={self.n_atoms}, n_frames={self.n_frames})"


def load(*paths: Union[str, os.PathLike], whole: bool = True) -> System:
    """Reads the files that together form one system (any format ``orbitfield`` reads: PDB,
    mmCIF, PSF, PQR, GRO, prmtop, DCD, XTC, TRR, NetCDF, SDF, Molden, fchk, wfn/wfx, QM logs, cube,
    DX, ...), as ``orbitfield info FILE...`` does.

    With ``whole`` (the default), molecules that a periodic box cuts into pieces are made whole in
    every frame (atoms moved by whole box vectors along their bonds), as the viewer and
    ``orbitfield grid`` do, so RMSD, radius of gyration, SASA and fields see intact molecules; a
    note in :attr:`System.warnings` says when the file had any in pieces. ``whole=False`` keeps the
    frames as the file wrote them (MDAnalysis's default).

    Example::

        s = orbitfield.load("adk.psf", "adk_dims.dcd")
    """
    names = [os.fspath(p) for p in paths]
    return System(_native.load(names, whole), names)


# --- PySCF -------------------------------------------------------------------------------------


def _pyscf_order(l: int, cart: bool):
    """For orbitfield's functions of one shell, the index of the same function in PySCF's order."""
    if cart:
        pyscf = [(lx, ly, l - lx - ly) for lx in range(l, -1, -1) for ly in range(l - lx, -1, -1)]
        where = {p: i for i, p in enumerate(pyscf)}
        return [where[tuple(p)] for p in _native.cartesian_powers(l)]
    if l < 2:
        # s; p as x, y, z in both (orbitfield keeps p shells Cartesian).
        return list(range(2 * l + 1))
    # PySCF: m = -l .. l; orbitfield: m = 0, +1, -1, +2, -2, ...
    order = [l]
    for m in range(1, l + 1):
        order += [l + m, l - m]
    return order


def from_pyscf(mol, mo_coeff, mo_occ, mo_energy=None) -> System:
    """A system holding the wavefunction of a PySCF calculation; its orbitals, density, spin
    density and potential then evaluate like those of any file.

    ``mo_coeff``/``mo_occ``/``mo_energy`` as PySCF gives them: [nao, nmo] for restricted (RHF,
    RKS, ROHF), [2, nao, nmo] for unrestricted calculations. Spherical and Cartesian basis sets
    (``mol.cart``) and effective core potentials (the nuclear charges are the effective ones) are
    converted into orbitfield's function order and normalisation.

    Example::

        from pyscf import gto, scf
        mol = gto.M(atom="O 0 0 0; H 0 0.757 0.587; H 0 -0.757 0.587", basis="6-31g*")
        mf = scf.RHF(mol).run()
        water = orbitfield.from_pyscf(mol, mf.mo_coeff, mf.mo_occ, mf.mo_energy)
        homo = water.grid("mo:homo", spacing=0.2)
    """
    from pyscf.data import elements as pyscf_elements

    cart = bool(mol.cart)
    mo_coeff = np.asarray(mo_coeff, dtype=np.float64)
    mo_occ = np.asarray(mo_occ, dtype=np.float64)
    unrestricted = mo_coeff.ndim == 3
    nao = mol.nao_nr(cart=cart)
    if mo_coeff.shape[-2] != nao:
        raise OrbitfieldError(f"mo_coeff has {mo_coeff.shape[-2]} rows but the molecule has {nao} basis functions")
    ao_loc = mol.ao_loc_nr(cart=cart)
    shells, perm = [], []
    for ib in range(mol.nbas):
        l = int(mol.bas_angular(ib))
        nctr = int(mol.bas_nctr(ib))
        exps = np.asarray(mol.bas_exp(ib), dtype=np.float64)
        coeffs = np.asarray(mol.bas_ctr_coeff(ib), dtype=np.float64).reshape(len(exps), nctr)
        nf = (l + 1) * (l + 2) // 2 if cart else 2 * l + 1
        order = _pyscf_order(l, cart)
        for ic in range(nctr):
            base = int(ao_loc[ib]) + ic * nf
            shells.append((l, (not cart) and l >= 2, int(mol.bas_atom(ib)), exps.tolist(), coeffs[:, ic].tolist()))
            perm.extend(base + k for k in order)
    perm = np.array(perm, dtype=np.int64)
    if len(perm) != nao:
        raise OrbitfieldError(f"the shells give {len(perm)} basis functions, the molecule has {nao}")
    # PySCF's Cartesian functions are not individually normalised; orbitfield's are.
    norms = np.sqrt(np.diag(mol.intor_symmetric("int1e_ovlp")))[perm]

    def orbital_set(c, occ, energy):
        c = c[perm, :] * norms[:, None]
        n = c.shape[1]
        energy = np.zeros(n) if energy is None else np.asarray(energy, dtype=np.float64)
        return (energy.tolist(), np.asarray(occ, dtype=np.float64).tolist(), np.ascontiguousarray(c.T).ravel().tolist())

    if unrestricted:
        e = (None, None) if mo_energy is None else np.asarray(mo_energy, dtype=np.float64)
        alpha = orbital_set(mo_coeff[0], mo_occ[0], e[0])
        beta = orbital_set(mo_coeff[1], mo_occ[1], e[1])
    else:
        alpha = orbital_set(mo_coeff, mo_occ, mo_energy)
        beta = None
    numbers = []
    for i in range(mol.natm):
        symbol = mol.atom_pure_symbol(i)
        z = int(pyscf_elements.charge(symbol))
        numbers.append(z)
    native = _native.wavefunction_system(
        numbers,
        [float(q) for q in mol.atom_charges()],
        [list(map(float, p)) for p in mol.atom_coords(unit="Bohr")],
        shells,
        alpha,
        beta,
        "PySCF",
        None,
    )
    return System(native)


# --- MDAnalysis --------------------------------------------------------------------------------


def _attribute(atoms, name):
    try:
        return getattr(atoms, name)
    except Exception:  # MDAnalysis raises NoDataError (an AttributeError/ValueError) when absent
        return None


def from_mdanalysis(atomgroup, frames=None) -> System:
    """A system of an MDAnalysis ``AtomGroup``: its atoms (names, residues, elements where known,
    partial charges where the topology has them) and its positions in every frame of the
    universe's trajectory (or the frames ``frames`` selects: a slice, or a list of indices).

    Example::

        import MDAnalysis as mda
        u = mda.Universe("adk.psf", "adk_dims.dcd")
        adk = orbitfield.from_mdanalysis(u.select_atoms("protein"), frames=slice(0, 10))
        esp = adk.grid("esp", frame=3, spacing=1.0)
    """
    ag = atomgroup.atoms if hasattr(atomgroup, "atoms") else atomgroup
    n = len(ag)
    names = [str(x) for x in ag.names]
    resnames = [str(x) for x in (_attribute(ag, "resnames") if _attribute(ag, "resnames") is not None else [""] * n)]
    resids_attr = _attribute(ag, "resids")
    resids = [int(x) for x in (resids_attr if resids_attr is not None else [0] * n)]
    segids_attr = _attribute(ag, "segids")
    segids = [str(x) for x in (segids_attr if segids_attr is not None else [""] * n)]
    elements_attr = _attribute(ag, "elements")
    elements = [str(x) for x in (elements_attr if elements_attr is not None else [""] * n)]
    charges = _attribute(ag, "charges")
    charges = None if charges is None else [float(q) for q in charges]
    masses = _attribute(ag, "masses")
    masses = None if masses is None else [float(m) for m in masses]
    trajectory = ag.universe.trajectory
    current = trajectory.ts.frame
    if frames is None:
        selected = trajectory
    elif isinstance(frames, slice):
        selected = trajectory[frames]
    else:
        selected = trajectory[list(frames)]
    blocks, cells, times = [], [], []
    try:
        for ts in selected:
            blocks.append(np.ascontiguousarray(ag.positions, dtype=np.float32))
            dims = ts.dimensions
            cells.append(None if dims is None else [float(x) for x in dims])
            times.append(float(ts.time))
    finally:
        trajectory[current]
    positions = np.concatenate(blocks).tobytes() if blocks else b""
    native = _native.md_system(
        elements, names, resnames, resids, segids, charges, masses, positions, cells, times, "MDAnalysis"
    )
    return System(native)


# --- images ------------------------------------------------------------------------------------


def _binary() -> str:
    exe = os.environ.get("ORBITFIELD_BIN") or shutil.which("orbitfield")
    if not exe:
        raise OrbitfieldError("render needs the orbitfield command: put it on PATH or set ORBITFIELD_BIN")
    return exe


def _quoted(path) -> str:
    text = os.fspath(path)
    if '"' not in text:
        return f'"{text}"'
    if "'" not in text:
        return f"'{text}'"
    raise OrbitfieldError(f"a path with both kinds of quote cannot be named in a command: {text}")


def run(commands, base_dir=None) -> list:
    """Carries out commands of orbitfield's command language without a window, as
    ``orbitfield run SCRIPT --headless`` does (images and movies by the offscreen renderer).
    ``commands`` is one string (lines, or commands separated by ``;``) or a list of lines; relative
    paths are taken from ``base_dir`` (the current folder by default). Returns what the commands
    reported (measurements, files written), in order. A failing command raises ``OrbitfieldError``
    naming its line and column; the commands before it have been carried out.

    Each call starts from nothing: what one call opened is gone in the next, so a loop over frames
    puts its ``open`` in every call, or better builds one list of commands (the command language has
    no loops of its own; Python is its loop)::

        lines = ["open adk.psf adk_dims.dcd", "measure rgyr protein"]
        lines += [f"frame {f}; save image frame{f:03d}.png" for f in range(0, 98, 10)]
        orbitfield.run(lines)

    Example::

        orbitfield.run(["open adk.psf adk_dims.dcd", "rep add cartoon protein",
                        "measure distance 817 2633", "frame 40; save image adk.png size 800x600"])
    """
    if not isinstance(commands, str):
        commands = "\n".join(commands)
    return list(_native.run(commands, None if base_dir is None else os.fspath(base_dir)))


def render(system_or_session, path, size=(1280, 960), frame: int = 0, args: Sequence[str] = ()) -> None:
    """Draws a system read from files (or a saved session file) to a PNG image without a window.
    Without ``args`` the image is drawn in this process by the command language (``open``,
    ``frame``, ``save image``: the viewer's default representations, or the session's). ``args`` are
    options of the ``orbitfield render`` command (``--rep``, ``--field``, ...); with them the command
    on PATH, or ``ORBITFIELD_BIN``, draws it.

    Example::

        orbitfield.render(orbitfield.load("adk.psf", "adk_dims.dcd"), "adk.png", size=(800, 600))
        orbitfield.render(orbitfield.load("adk.psf"), "cartoon.png", args=["--rep", "protein:cartoon"])
    """
    w, h = (int(x) for x in size)
    if isinstance(system_or_session, System):
        if not system_or_session.paths:
            raise OrbitfieldError("render draws systems read from files (orbitfield.load) or sessions")
        files = list(system_or_session.paths)
    else:
        files = [system_or_session]
    if not args:
        run([
            "open " + " ".join(_quoted(os.path.abspath(os.fspath(f))) for f in files),
            f"frame {int(frame)}",
            f"save image {_quoted(os.path.abspath(os.fspath(path)))} size {w}x{h}",
        ])
        return
    cmd = [_binary(), "render"]
    if isinstance(system_or_session, System):
        cmd += files
    else:
        cmd += ["--session", os.fspath(system_or_session)]
    cmd += ["-o", os.fspath(path), "--size", f"{w}x{h}", "--frame", str(int(frame)), *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.startswith("error: ")] or done.stderr.strip().splitlines()
        raise OrbitfieldError(lines[-1].removeprefix("error: ") if lines else "render failed")
