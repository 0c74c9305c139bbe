//! The CPU field engine (rayon + SIMD): the numerical reference for every other engine.
pub mod overlap;
pub mod points;
