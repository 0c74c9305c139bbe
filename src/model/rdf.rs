//! The settings of a radial distribution function: what the CPU path (`analysis::rdf`, which
//! re-exports them) and the CUDA kernels (`compute::cuda::rdf`) both read. Plain data.

/// Settings of one RDF computation.
#[derive(Clone, Debug, PartialEq)]
pub struct RdfSettings {
    pub r_max_angstrom: f64,
    pub bins: usize,
    /// Pairs whose atoms share a residue (or any other grouping) are skipped: one group id per atom
    /// of the system, compared between the two atoms of a pair.
    pub exclude_same_group: bool,
}
