//! The one definition of the command language: every verb, its forms (sub-words such as
//! `rep add`), their arguments and options with kinds and help text ([`VERBS`]). The parser
//! ([`parse`]), `help VERB` ([`help_text`]), completion (`script::complete`) and the reference
//! page `docs/scripting.md` ([`reference_markdown`]) are all read from it.

pub use super::parse::{Parsed, Problem, Value, parse, parse_color, resolve};

/// What an argument holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A non-negative whole number.
    Int,
    /// A number.
    Number,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A field as on the command line (`mo:homo`, `density`, `esp`, `pb`, `ils:1`, `molsurf:SEL`).
    Field,
    /// An atom selection (the rest of the statement up to an option word).
    Selection,
    /// A file to write (relative to the script's folder).
    OutPath,
    /// An existing file (relative to the script's folder).
    InPath,
    /// One or more existing files (the rest of the statement).
    InPaths,
    /// `WIDTHxHEIGHT` in pixels.
    Size,
    /// A colour: a name, `#rrggbb` or `r,g,b` (0-255).
    Color,
    /// The rest of the statement as written.
    Text,
    /// Frames `A:B` (B excluded) or `all`.
    Range,
    /// Frames as the ILS form takes them: `all`, `N`, `A:B` or `A:B:S` (B excluded).
    Frames,
    /// An existing file (relative to the script's folder), or `none`.
    FileOrNone,
    /// Two atom selections: `SELECTION with SELECTION` (the rest of the statement up to an option
    /// word).
    SelectionPair,
}

impl Kind {
    /// How usage lines and the reference name a value of this kind.
    pub fn placeholder(self) -> &'static str {
        match self {
            Kind::Int => "N",
            Kind::Number => "X",
            Kind::Choice(_) => "WORD",
            Kind::Field => "FIELD",
            Kind::Selection => "SELECTION",
            Kind::OutPath | Kind::InPath => "FILE",
            Kind::InPaths => "FILE...",
            Kind::Size => "WxH",
            Kind::Color => "COLOR",
            Kind::Text => "TEXT",
            Kind::Range => "A:B",
            Kind::Frames => "A:B[:S]",
            Kind::FileOrNone => "FILE|none",
            Kind::SelectionPair => "SELECTION with SELECTION",
        }
    }
}

/// A positional argument.
#[derive(Debug)]
pub struct Arg {
    pub name: &'static str,
    pub kind: Kind,
    pub optional: bool,
    pub help: &'static str,
}

/// An option: a word, followed by a value unless it is a flag (`kind` `None`).
#[derive(Debug)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Option<Kind>,
    pub help: &'static str,
}

/// One form of a verb: its leading sub-words (empty for the verb alone), arguments and options.
#[derive(Debug)]
pub struct Form {
    pub words: &'static [&'static str],
    pub args: &'static [Arg],
    pub opts: &'static [Opt],
    pub help: &'static str,
}

/// A verb of the language.
#[derive(Debug)]
pub struct Verb {
    pub name: &'static str,
    pub summary: &'static str,
    pub forms: &'static [Form],
    pub example: &'static str,
}

pub(super) const fn arg(name: &'static str, kind: Kind, help: &'static str) -> Arg {
    Arg {
        name,
        kind,
        optional: false,
        help,
    }
}

pub(super) const fn opt_arg(name: &'static str, kind: Kind, help: &'static str) -> Arg {
    Arg {
        name,
        kind,
        optional: true,
        help,
    }
}

pub(super) const fn opt(name: &'static str, kind: Kind, help: &'static str) -> Opt {
    Opt {
        name,
        kind: Some(kind),
        help,
    }
}

pub(super) const fn flag(name: &'static str, help: &'static str) -> Opt {
    Opt { name, kind: None, help }
}

pub(super) const fn form(
    words: &'static [&'static str],
    args: &'static [Arg],
    opts: &'static [Opt],
    help: &'static str,
) -> Form {
    Form {
        words,
        args,
        opts,
        help,
    }
}

/// Atom styles, cartoon styles and the molecular surface: what `rep add` draws.
pub const REP_STYLES: &[&str] = &[
    "lines",
    "licorice",
    "ball-and-stick",
    "vdw",
    "cpk",
    "hbonds",
    "cartoon",
    "tube",
    "trace",
    "surface",
    // The solvent-excluded surface (a 1.4 A probe), as MSMS, PyMOL and ChimeraX draw it.
    "ses",
    // The Add menu's "Atoms (licorice)", PyMOL's sticks and spheres.
    "atoms",
    "sticks",
    "spheres",
];
pub(super) const ON_OFF: &[&str] = &["on", "off"];
const REP_PROPERTIES: &[&str] = &[
    "style",
    "color",
    "selection",
    "opacity",
    "iso",
    "field",
    "hbonds",
    "surface",
];
const AXES: &[&str] = &["x", "y", "z"];
const SETTINGS: &[&str] = &[
    "units",
    "background",
    "lighting",
    "depthcue",
    "colormap",
    "lattice",
    "energies",
    "model",
    "rampabove",
    "follow",
    "cell",
    "whole",
    "ionic",
    "epsin",
    "epsout",
    "probe",
    "pbspacing",
];
const LABEL_FORMATS: &[&str] = &["name", "residue", "both", "full"];

/// Every verb, in the order help and the reference list them.
pub const VERBS: &[Verb] = &[
    Verb {
        name: "open",
        summary: "Open files as one system (a topology, then its trajectories; a ligand beside its protein; a wavefunction; volumes), or a session.",
        forms: &[
            form(
                &["session"],
                &[arg(
                    "file",
                    Kind::InPath,
                    "a session file (.ron) saved by `save session` or File > Save session",
                )],
                &[],
                "Opens a session: its files, representations, frame and camera.",
            ),
            form(
                &[],
                &[arg(
                    "files",
                    Kind::InPaths,
                    "the files, relative to the script's folder; a folder or a name with * gives its files (a series of frames)",
                )],
                &[],
                "Opens the files together, replacing what is open; the document gets the default representations.",
            ),
        ],
        example: "open adk.psf adk_dims.dcd",
    },
    Verb {
        name: "fetch",
        summary: "Download an entry of the Protein Data Bank by its ID and open it (kept for next time).",
        forms: &[form(
            &[],
            &[arg("id", Kind::Text, "the entry's ID: 1ubq, or pdb_00001ubq")],
            &[],
            "Downloads the entry's mmCIF file (RCSB, or ORBITFIELD_PDB_URL) into the cache, then opens it as `open` does.",
        )],
        example: "fetch 1ubq",
    },
    Verb {
        name: "close",
        summary: "Close the open document.",
        forms: &[form(&[], &[], &[], "Closes the document and its representations.")],
        example: "close",
    },
    Verb {
        name: "rep",
        summary: "Add, change, delete, show or hide representations (numbered from 1 in the list's order).",
        forms: &[
            form(
                &["add"],
                &[
                    arg(
                        "style",
                        Kind::Choice(REP_STYLES),
                        "an atom style, a cartoon style, surface (the selection's molecular surface: its atoms' summed Gaussians, smooth and fast) or ses (its solvent-excluded surface, a 1.4 Å probe, as MSMS, PyMOL and ChimeraX draw it)",
                    ),
                    opt_arg("selection", Kind::Selection, "the atoms (default all)"),
                ],
                &[
                    opt(
                        "color",
                        Kind::Text,
                        "atoms: element|residue|chain|charge|beta; cartoons: ss|chain|residue|index|beta|esp|volume:N; surfaces: esp|potential|pb|volume:N, or their atoms' element|residue|chain|charge|beta",
                    ),
                    opt("opacity", Kind::Number, "0 to 1 (surfaces)"),
                ],
                "Adds a representation at the end of the list.",
            ),
            form(
                &["modify"],
                &[
                    arg("rep", Kind::Int, "the representation's number"),
                    arg(
                        "property",
                        Kind::Choice(REP_PROPERTIES),
                        "what to change: atoms style|color|selection|hbonds; cartoons style|color|selection; fields field|style|iso|opacity|color, and a molecular surface's selection (its atoms) and surface (gaussian or ses)",
                    ),
                    arg(
                        "value",
                        Kind::Text,
                        "the new value (a style, a colouring, a selection, a number, a field such as molsurf:protein; hbonds: distance Å [angle ° [distance without hydrogens Å]])",
                    ),
                ],
                &[],
                "Changes one property of a representation.",
            ),
            form(
                &["delete"],
                &[arg("rep", Kind::Text, "the representation's number, or all")],
                &[],
                "Removes a representation (or all of them).",
            ),
            form(
                &["list"],
                &[],
                &[],
                "Lists the representations with their numbers: what each shows, its colouring, and which are hidden.",
            ),
            form(
                &["show"],
                &[arg("rep", Kind::Int, "the representation's number")],
                &[],
                "Shows a hidden representation.",
            ),
            form(
                &["hide"],
                &[arg("rep", Kind::Int, "the representation's number")],
                &[],
                "Hides a representation.",
            ),
            form(
                &["select"],
                &[arg("rep", Kind::Int, "the representation's number")],
                &[],
                "Selects a representation: `iso`, `field` and the Field panel edit it.",
            ),
            form(
                &["duplicate"],
                &[arg("rep", Kind::Int, "the representation's number")],
                &[],
                "Adds a copy just below it.",
            ),
            form(
                &["move"],
                &[
                    arg("rep", Kind::Int, "the representation's number"),
                    arg("to", Kind::Int, "its new number"),
                ],
                &[],
                "Moves a representation in the list.",
            ),
            form(
                &["reset"],
                &[],
                &[],
                "Replaces the representations by the defaults for the document.",
            ),
        ],
        example: "rep add cartoon protein",
    },
    Verb {
        name: "color",
        summary: "Colour a representation: atoms and cartoons by a scheme or one colour, surfaces by a field, a molecular surface also by its atoms' scheme (each point as its nearest atom), or with two lobe colours.",
        forms: &[form(
            &[],
            &[
                arg("rep", Kind::Int, "the representation's number"),
                arg(
                    "scheme",
                    Kind::Text,
                    "element|residue|chain|charge|beta, ss|index, esp|potential|pb|volume:N|none, or a colour (a name, #rrggbb or r,g,b; a surface takes two); a colouring by a field may end in `range LOW HIGH` (the colormap's ends, in the legend's unit) or `range auto`",
                ),
            ],
            &[],
            "As the Field panel's colouring (and its colour range) and the representation editor's colour choice.",
        )],
        example: "color 2 volume:2 range -0.05 0.05",
    },
    Verb {
        name: "field",
        summary: "Add a field's isosurfaces, or change the field the Field panel edits.",
        forms: &[
            form(
                &["add"],
                &[arg(
                    "field",
                    Kind::Field,
                    "mo:homo, mo:12, density, spin, esp, potential, pb, ils:1, volume:1, molsurf",
                )],
                &[opt("iso", Kind::Number, "the isovalue in the field's unit")],
                "Adds an isosurface representation of the field.",
            ),
            form(
                &[],
                &[arg("field", Kind::Field, "the field")],
                &[],
                "Shows the field in the representation the Field panel edits (a new one when there is none).",
            ),
        ],
        example: "field add mo:homo iso 0.05",
    },
    Verb {
        name: "iso",
        summary: "Set the isovalue of the representation the Field panel edits.",
        forms: &[form(
            &[],
            &[arg(
                "value",
                Kind::Number,
                "in the field's unit (a.u., or the potential unit of `set units`)",
            )],
            &[flag("relative", "the value is a fraction of the largest |value|")],
            "As the Field panel's isovalue.",
        )],
        example: "iso 0.03",
    },
    Verb {
        name: "slice",
        summary: "Show a slice through a plane of the field the Field panel edits (the selected field representation, else the first), or hide it.",
        forms: &[
            form(&["off"], &[], &[], "Hides the slice."),
            form(
                &["range", "auto"],
                &[],
                &[],
                "The colormap's ends go back to the field's own: ±5 kT/e for a Poisson-Boltzmann map, the screened models' ranges, else the 99th percentile of |value|.",
            ),
            form(
                &["range"],
                &[
                    arg(
                        "low",
                        Kind::Number,
                        "the value at the colormap's low end, in the field's unit",
                    ),
                    arg("high", Kind::Number, "the value at its high end"),
                ],
                &[],
                "Sets the colormap's ends of the slice (the legend shows them).",
            ),
            form(
                &[],
                &[
                    opt_arg("axis", Kind::Choice(AXES), "the plane's normal (default z)"),
                    opt_arg(
                        "position",
                        Kind::Number,
                        "where it cuts: -0.5 to 0.5 of the extent (default 0)",
                    ),
                ],
                &[],
                "Adds (or moves) the slice of that field; a slice of another field is hidden (one plane is drawn).",
            ),
        ],
        example: "slice z 0.1",
    },
    Verb {
        name: "frame",
        summary: "Go to a frame (numbered from 0) or step.",
        forms: &[
            form(&["next"], &[], &[], "The next frame."),
            form(&["previous"], &[], &[], "The previous frame."),
            form(&["first"], &[], &[], "Frame 0."),
            form(&["last"], &[], &[], "The last frame."),
            form(
                &[],
                &[arg("index", Kind::Int, "the frame, from 0")],
                &[],
                "Shows that frame.",
            ),
        ],
        example: "frame 40",
    },
    Verb {
        name: "play",
        summary: "Start or stop playback; its rate and looping.",
        forms: &[form(
            &[],
            &[opt_arg("state", Kind::Choice(ON_OFF), "on (default) or off")],
            &[
                opt("fps", Kind::Number, "frames per second (0.5 to 120)"),
                opt("loop", Kind::Choice(ON_OFF), "start again at the end"),
            ],
            "As the timeline's play button.",
        )],
        example: "play on fps 24",
    },
    super::verbs_tools::MEASURE,
    super::verbs_tools::ILS,
    super::verbs_tools::RDF,
    Verb {
        name: "label",
        summary: "Label the atoms of a selection, clear the labels, or choose what labels say.",
        forms: &[
            form(&["off"], &[], &[], "Removes every label."),
            form(
                &["format"],
                &[arg("format", Kind::Choice(LABEL_FORMATS), "what a label shows")],
                &[],
                "name: the atom name (CA); residue: the residue alone (LYS26, one label per residue: label their CA atoms); both: residue and name (LYS26:CA, the default); full: both and the atom's number (LYS26:CA #353). With several chains the chain comes first (A:LYS26).",
            ),
            form(
                &[],
                &[arg("selection", Kind::Selection, "the atoms")],
                &[],
                "Labels the atoms.",
            ),
        ],
        example: "label resid 1 and name CA",
    },
    Verb {
        name: "fit",
        summary: "Fit every frame onto frame 0 by a selection's atoms (least squares, no reflection), or show frames as read.",
        forms: &[
            form(&["off"], &[], &[], "Frames as read (made whole or not), not fitted."),
            form(
                &[],
                &[opt_arg(
                    "selection",
                    Kind::Selection,
                    "the atoms fitted (default: a protein's C-alpha atoms, else the heavy atoms)",
                )],
                &[],
                "Fits each frame as it is shown; the periodic box is not drawn meanwhile. Not for frames with wavefunctions.",
            ),
        ],
        example: "fit protein and backbone",
    },
    Verb {
        name: "select",
        summary: "Set the selection the Add menu uses and report how many atoms it picks.",
        forms: &[form(
            &[],
            &[arg("selection", Kind::Selection, "the atoms")],
            &[],
            "As the Add menu's selection field.",
        )],
        example: "select protein and not hydrogen",
    },
    Verb {
        name: "view",
        summary: "Frame everything, a selection, or put the camera at a saved place.",
        forms: &[
            form(
                &["camera"],
                &[arg(
                    "target",
                    Kind::Text,
                    "X,Y,Z DISTANCE QX,QY,QZ,QW [FOV]: the point looked at (Angstrom), its distance, the rotation quaternion and the vertical field of view (degrees)",
                )],
                &[],
                "Puts the camera exactly where the numbers say (the action log writes camera moves this way).",
            ),
            form(
                &[],
                &[opt_arg("selection", Kind::Selection, "the atoms (default: everything)")],
                &[],
                "Fits the view.",
            ),
        ],
        example: "view protein",
    },
    Verb {
        name: "turn",
        summary: "Rotate the view about the screen's x or y axis.",
        forms: &[form(
            &[],
            &[
                arg("axis", Kind::Choice(&["x", "y"]), "the axis"),
                arg("degrees", Kind::Number, "the angle"),
            ],
            &[],
            "As dragging in the view.",
        )],
        example: "turn y 30",
    },
    Verb {
        name: "zoom",
        summary: "Magnify the view by a factor (2: twice as large).",
        forms: &[form(
            &[],
            &[arg("factor", Kind::Number, "greater than 0")],
            &[],
            "As the mouse wheel.",
        )],
        example: "zoom 1.5",
    },
    Verb {
        name: "center",
        summary: "Look at the centre of a selection (the distance stays).",
        forms: &[form(
            &[],
            &[arg("selection", Kind::Selection, "the atoms")],
            &[],
            "Moves the point the view turns about.",
        )],
        example: "center resid 12",
    },
    Verb {
        name: "save",
        summary: "Write an image, a movie, the session, a field's map, a surface's mesh or coordinates.",
        forms: &[
            form(
                &["image"],
                &[arg("file", Kind::OutPath, "a PNG file")],
                &[
                    opt("size", Kind::Size, "pixels (default: the view's size)"),
                    opt("supersample", Kind::Int, "1, 2 or 4"),
                    flag("transparent", "a transparent background"),
                    flag("legend", "draw the colour legends"),
                    flag(
                        "labels",
                        "draw the measurements and atom labels, as the view shows them",
                    ),
                ],
                "The 3-D view, as File > Export image (without legends, measurements or labels unless asked).",
            ),
            form(
                &["movie"],
                &[arg("file", Kind::OutPath, "an .mp4 file, or a folder for PNG frames")],
                &[
                    opt(
                        "frames",
                        Kind::Frames,
                        "A:B or A:B:STEP, the stop excluded (default all)",
                    ),
                    opt("fps", Kind::Number, "frames per second (default 24)"),
                    opt("size", Kind::Size, "pixels (default: the view's size)"),
                    flag("legend", "draw the colour legends"),
                    flag(
                        "labels",
                        "draw the measurements and atom labels at each frame's positions",
                    ),
                ],
                "As File > Record movie, waiting for each frame's surfaces.",
            ),
            form(
                &["session"],
                &[arg("file", Kind::OutPath, "a .ron file")],
                &[],
                "As File > Save session.",
            ),
            form(
                &["map"],
                &[
                    arg("field", Kind::Field, "the field"),
                    arg("file", Kind::OutPath, "a .cube or .dx file"),
                ],
                &[],
                "The field at the current frame on the viewer's lattice, computed by the CPU engine.",
            ),
            form(
                &["rdf"],
                &[arg("file", Kind::OutPath, "a text file: r (A), g(r), n(r)")],
                &[],
                "The g(r) of the last `rdf` (waited for without a window), as `orbitfield rdf -o` writes it.",
            ),
            form(
                &["mesh"],
                &[
                    arg("rep", Kind::Int, "a field representation's number"),
                    arg("file", Kind::OutPath, "a .ply or .obj file"),
                ],
                &[],
                "The representation's isosurfaces as shown now.",
            ),
            form(
                &["coordinates"],
                &[arg(
                    "file",
                    Kind::OutPath,
                    "PDB, GRO, XYZ, DCD, XTC or TRR by its extension",
                )],
                &[
                    opt(
                        "selection",
                        Kind::Text,
                        "the atoms (default all; quote a selection of several words)",
                    ),
                    opt("frames", Kind::Range, "A:B or all (default all)"),
                ],
                "As File > Save as.",
            ),
        ],
        example: "save image adk.png size 800x600",
    },
    Verb {
        name: "run",
        summary: "Run another script (relative to this script's folder).",
        forms: &[form(
            &[],
            &[arg("file", Kind::InPath, "an .ofc script")],
            &[],
            "Its commands run as if written here.",
        )],
        example: "run scene.ofc",
    },
    Verb {
        name: "set",
        summary: "Settings: potential units, background, lighting (depth cue), colormap, lattice points, energies in eV, the electrostatic model of potentials, the unit cell, molecules made whole across it.",
        forms: &[form(
            &[],
            &[
                arg("setting", Kind::Choice(SETTINGS), "which setting"),
                arg(
                    "value",
                    Kind::Text,
                    "units: kT/e|kcal/mol/e|V|a.u.; background: dark|light|COLOR; lighting or depthcue: how far atoms fade with depth, 0 to 1; colormap: a colormap's name; lattice: points along the longest axis; energies: ev|hartree; model: the electrostatic model of the charges' potential, vacuum|4r (eps = s r, any slope: 2.5r)|debye (Debye-Hueckel, 0.15 M, eps 78.54, 298.15 K)|pb (Poisson-Boltzmann); rampabove: on|off, colours sampled 1.4 A outside surfaces; follow: on|off, the orbital shown matched through a wavefunction series' frames by overlap; cell: on|off, the periodic box drawn; whole: on|off, molecules made whole across the periodic box (off: coordinates as the file wrote them); ionic (M), epsin, epsout, probe (A), pbspacing (A): the Poisson-Boltzmann model's ionic strength, dielectrics, solvent probe and lattice spacing",
                ),
            ],
            &[],
            "As the View section and the settings.",
        )],
        example: "set background white",
    },
    Verb {
        name: "help",
        summary: "List the verbs, or describe one.",
        forms: &[form(
            &[],
            &[opt_arg("verb", Kind::Text, "a verb")],
            &[],
            "Prints the help.",
        )],
        example: "help rep",
    },
    Verb {
        name: "undo",
        summary: "Undo the last change of representations, measurements, labels or view.",
        forms: &[form(&[], &[], &[], "As Ctrl+Z.")],
        example: "undo",
    },
    Verb {
        name: "redo",
        summary: "Do again what undo took back.",
        forms: &[form(&[], &[], &[], "As Ctrl+Shift+Z.")],
        example: "redo",
    },
    Verb {
        name: "quit",
        summary: "Close the viewer (a script's last line), or end a headless script here.",
        forms: &[form(
            &[],
            &[],
            &[],
            "As File > Quit: the settings are saved and the window closes.",
        )],
        example: "quit",
    },
];

/// The verb named `name` (case-insensitive).
pub fn verb(name: &str) -> Option<&'static Verb> {
    VERBS.iter().find(|v| v.name.eq_ignore_ascii_case(name))
}

/// The verb nearest to a mistyped one (edit distance at most 2, or a prefix).
pub fn nearest_verb(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    VERBS
        .iter()
        .map(|v| (edit_distance(&lower, v.name), v.name))
        .filter(|(d, v)| *d <= 2 || v.starts_with(&lower))
        .min()
        .map(|(_, v)| v)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j])).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `verb sub ARG [ARG] [opt VALUE] [flag]`.
pub fn usage(verb: &Verb, form: &Form) -> String {
    let mut s = verb.name.to_string();
    for w in form.words {
        s.push(' ');
        s.push_str(w);
    }
    for a in form.args {
        let name = match a.kind {
            Kind::Choice(words) if words.len() <= 4 => words.join("|"),
            k => k.placeholder().to_string(),
        };
        s.push(' ');
        s.push_str(&if a.optional { format!("[{name}]") } else { name });
    }
    for o in form.opts {
        s.push_str(&match o.kind {
            Some(k) => format!(" [{} {}]", o.name, k.placeholder()),
            None => format!(" [{}]", o.name),
        });
    }
    s
}

/// `help`: every verb with its summary; `help VERB`: its forms, arguments and options.
pub fn help_text(name: Option<&str>) -> Result<String, String> {
    let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
        let mut s = String::from("Commands (help VERB for one):\n");
        for v in VERBS {
            s.push_str(&format!("  {:<8} {}\n", v.name, v.summary));
        }
        return Ok(s);
    };
    let word = name.split_whitespace().next().unwrap_or(name);
    let Some(v) = verb(word) else {
        return Err(match nearest_verb(word) {
            Some(n) => format!("no command '{word}'; did you mean '{n}'?"),
            None => format!("no command '{word}'"),
        });
    };
    let mut s = format!("{}: {}\n", v.name, v.summary);
    for f in v.forms {
        s.push_str(&format!("  {}\n      {}\n", usage(v, f), f.help));
        for a in f.args {
            s.push_str(&format!("      {}: {}\n", a.kind.placeholder(), a.help));
        }
        for o in f.opts {
            s.push_str(&format!("      {}: {}\n", o.name, o.help));
        }
    }
    s.push_str(&format!("  example: {}\n", v.example));
    Ok(s)
}

/// The reference page of the language (`docs/scripting.md`), from the table.
pub fn reference_markdown() -> String {
    let mut s = String::from(
        "# Command scripts\n\n\
         <!-- Generated from src/script/verbs.rs by `ORBITFIELD_UPDATE_DOCS=1 cargo test --lib script::verbs`; do not edit. -->\n\n\
         One command per line (or several separated by `;`); `#` opening a command or followed by a blank starts a comment (`#rrggbb` is a colour); quote paths with spaces \
         (`\"my file.pdb\"`). Paths are relative to the script's folder. The same commands are typed in the \
         window's command line (under the view), and every action in the window is logged as one of them \
         (*Save as script…* in the log). Atoms are numbered from 1, frames from 0, representations from 1 \
         in the list's order. Selections use the viewer's language (`protein and not hydrogen`, \
         `within 5 of resid 12`).\n\n\
         Run a script in the window: `orbitfield [FILE...] SCRIPT.ofc` (the files open first); without a window: `orbitfield run SCRIPT.ofc \
         --headless` (images and movies by the offscreen renderer). A failing command stops the script with \
         `FILE:LINE:COLUMN: problem`, and nothing of that command is applied. The language has no loops or \
         variables: Python's `orbitfield.run([...])` takes a list of commands built in a loop.\n\n",
    );
    for v in VERBS {
        s.push_str(&format!("## `{}`\n\n{}\n\n", v.name, v.summary));
        for f in v.forms {
            s.push_str(&format!("- `{}`: {}\n", usage(v, f), f.help));
            for a in f.args {
                s.push_str(&format!("  - `{}`: {}\n", a.kind.placeholder(), a.help));
            }
            for o in f.opts {
                s.push_str(&format!("  - `{}`: {}\n", o.name, o.help));
            }
        }
        s.push_str(&format!("\nExample: `{}`\n\n", v.example));
    }
    s
}

#[cfg(test)]
#[path = "verbs_tests.rs"]
mod tests;
