//! The verbs of the analyses that run over the trajectory while the user works: the ligand
//! free-energy map (`ils`, the "Ligand free energy (ILS)" form of the Add menu and its field
//! panel) and the radial distribution function (`rdf`, the RDF panel). Part of the one verb table
//! (`script::verbs::VERBS`).

use super::verbs::{Kind, ON_OFF, Verb, arg, form, opt};

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
