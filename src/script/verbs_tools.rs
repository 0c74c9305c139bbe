//! The verbs of the analyses: measurements (`measure`, the Measure menu and the Measurements
//! panel), and those that run over the trajectory while the user works: the ligand free-energy
//! map (`ils`, the "Ligand free energy (ILS)" form of the Add menu and its field panel) and the
//! radial distribution function (`rdf`, the RDF panel). Part of the one verb table
//! (`script::verbs::VERBS`).

use super::verbs::{Kind, ON_OFF, Verb, arg, flag, form, opt, opt_arg};

/// `measure`: distances, angles and dihedrals between atoms, RMSD, radius of gyration and SASA.
pub const MEASURE: Verb = Verb {
    name: "measure",
    summary: "Measure between atoms (numbered from 1 in the file's order, as VMD's `serial`; a PDB file's own serial numbers can skip, after a TER record), or the RMSD of a selection between frames.",
    forms: &[
        form(
            &["distance"],
            &[arg("a", Kind::Int, "atom"), arg("b", Kind::Int, "atom")],
            &[],
            "A distance in Angstrom, drawn and listed; follows the frames.",
        ),
        form(
            &["angle"],
            &[
                arg("a", Kind::Int, "atom"),
                arg("b", Kind::Int, "vertex atom"),
                arg("c", Kind::Int, "atom"),
            ],
            &[],
            "An angle in degrees.",
        ),
        form(
            &["dihedral"],
            &[
                arg("a", Kind::Int, "atom"),
                arg("b", Kind::Int, "atom"),
                arg("c", Kind::Int, "atom"),
                arg("d", Kind::Int, "atom"),
            ],
            &[],
            "A dihedral in degrees.",
        ),
        form(
            &["rmsd"],
            &[opt_arg("selection", Kind::Selection, "the atoms (default all)")],
            &[
                opt("reference", Kind::Int, "the reference frame (default 0)"),
                flag(
                    "fit",
                    "after the best rigid superposition of the selection (Kabsch), as VMD's RMSD tool and MDAnalysis's rms.rmsd(superposition=True) report it",
                ),
                flag(
                    "keep",
                    "also list it in the Measurements panel, where it follows the frames and plots over all of them",
                ),
            ],
            "The RMSD in Angstrom of the selection's atoms between the current frame and the reference: as the frames stand, or with `fit` after superposing them; reported (with `keep`, also listed).",
        ),
        form(
            &["rgyr"],
            &[opt_arg("selection", Kind::Selection, "the atoms (default all)")],
            &[flag(
                "keep",
                "also list it in the Measurements panel, where it follows the frames and plots over all of them",
            )],
            "The mass-weighted radius of gyration in Angstrom of the selection's atoms at the current frame, as VMD's `measure rgyr` with masses and MDAnalysis's radius_of_gyration() report it (with `keep`, also listed).",
        ),
        form(
            &["sasa"],
            &[opt_arg("selection", Kind::Selection, "the atoms (default all)")],
            &[flag(
                "keep",
                "also list it in the Measurements panel, where it follows the frames and plots over all of them",
            )],
            "The solvent-accessible surface area in square Angstrom of the selection's atoms at the current frame (Shrake-Rupley, 960 points per atom, water probe 1.4 Angstrom, Bondi radii; the selection its own environment, as VMD's `measure sasa`); with `keep`, also listed.",
        ),
        form(
            &["delete"],
            &[arg(
                "measurement",
                Kind::Int,
                "its number in the Measurements panel, from 1",
            )],
            &[],
            "Removes a measurement.",
        ),
        form(&["clear"], &[], &[], "Removes every measurement."),
    ],
    example: "measure distance 1 2",
};

/// The probes of the ILS form.
pub const PROBES: &[&str] = &["o2", "co", "no", "xe"];
const PATH_ENDS: &[&str] = &["bulk", "end"];

/// `ils`: the ligand free-energy map (implicit ligand sampling).
pub const ILS: Verb = Verb {
    name: "ils",
    summary: "Compute a ligand free-energy map (implicit ligand sampling) over the trajectory; pause, continue or stop it; find gas pathways on it.",
    forms: &[
        form(
            &["start"],
            &[],
            &[
                opt("probe", Kind::Choice(PROBES), "the gas: o2, co, no or xe"),
                opt(
                    "sel",
                    Kind::Selection,
                    "the atoms the probe feels (quote a selection of several words)",
                ),
                opt(
                    "around",
                    Kind::Selection,
                    "the atoms the lattice is placed around at the first frame, padded by 2 A (\"\": the atoms the probe feels)",
                ),
                opt("frames", Kind::Frames, "all, N, A:B or A:B:S (from 0, B excluded)"),
                opt("spacing", Kind::Number, "the lattice spacing, Angstrom (at least 0.1)"),
                opt(
                    "subres",
                    Kind::Int,
                    "sample points per voxel edge, 1 to 8 (the viewer starts at 2 for a live map; `grid ils` at 3)",
                ),
                opt(
                    "orient",
                    Kind::Int,
                    "orientations of a diatomic probe, 1 to 2000 (Xe has one; the viewer starts at 30, `grid ils` at 100)",
                ),
                opt(
                    "align",
                    Kind::Selection,
                    "fit every frame onto the first by these atoms; none: frames as they are",
                ),
                opt(
                    "params",
                    Kind::FileOrNone,
                    "a CHARMM parameter file (.prm, .str) for topologies that name atom types only; none: the topology's own",
                ),
                opt(
                    "elements",
                    Kind::Choice(ON_OFF),
                    "on: every atom's Lennard-Jones parameters from the element table (UFF)",
                ),
            ],
            "Sets the ILS form (each option given replaces that value, the others keep theirs) and starts the map as its Start button does: an isosurface representation of `ils:N` is added and fills in frame by frame (a script without a window waits for it). A map asked for while another computes waits for it.",
        ),
        form(
            &["pause"],
            &[],
            &[],
            "Pauses the running map (frames already handed out still arrive).",
        ),
        form(&["continue"], &[], &[], "Continues the paused map."),
        form(
            &["cancel"],
            &[],
            &[],
            "Stops the running map where it is; it keeps the frames it has.",
        ),
        form(
            &["path", "end"],
            &[
                arg("map", Kind::Int, "the map's number (ils:N)"),
                arg("atom", Kind::Int, "an atom, from 1"),
            ],
            &[],
            "Marks the most favoured lattice point within 4 A of the atom (at the current frame) as the end of the next pathway between two points.",
        ),
        form(
            &["path", "clear"],
            &[arg("map", Kind::Int, "the map's number (ils:N)")],
            &[],
            "Removes the map's pathways and its marked end.",
        ),
        form(
            &["path"],
            &[
                arg("map", Kind::Int, "the map's number (ils:N)"),
                arg("atom", Kind::Int, "an atom, from 1"),
            ],
            &[opt(
                "to",
                Kind::Choice(PATH_ENDS),
                "bulk (the map's faces, default) or end (marked by `ils path end`)",
            )],
            "The lowest-barrier pathway from the most favoured lattice point within 4 A of the atom, listed with its barrier and length and drawn as a tube, as the field panel's pathway buttons do for the picked atom.",
        ),
    ],
    example: "ils start probe xe sel protein spacing 1 frames 0:10",
};

/// `rdf`: the radial distribution function of the RDF panel.
pub const RDF: Verb = Verb {
    name: "rdf",
    summary: "Compute the radial distribution function g(r) between two selections over the trajectory (the RDF panel), or stop it.",
    forms: &[
        form(
            &["cancel"],
            &[],
            &[],
            "Stops the running g(r); the plot keeps the frames it has.",
        ),
        form(
            &[],
            &[arg(
                "selections",
                Kind::SelectionPair,
                "the two selections, separated by the word with",
            )],
            &[
                opt("rmax", Kind::Number, "the largest distance, Angstrom (0.5 to 100)"),
                opt("bins", Kind::Int, "histogram bins, 1 to 10000"),
            ],
            "Sets the RDF panel's values (options not given keep the panel's) and computes g(r) over all frames, as its Compute button does; the plot grows as frames arrive (a script without a window waits for it).",
        ),
    ],
    example: "rdf name OW with name OW rmax 10 bins 100",
};
