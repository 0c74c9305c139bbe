//! Isosurface extraction (marching cubes) and mesh export.
