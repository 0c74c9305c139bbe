//! Mesh export: binary little-endian PLY and Wavefront OBJ, as the bytes of a file. Writing the file
//! is the caller's (`io::write_atomically`).
//!
//! Called by the `orbitfield surface` command and the tests. Positions are written
//! in Angstrom, with per-vertex normals; faces index the shared vertices. A mesh's per-vertex values
//! (`MeshData::values`, e.g. a potential at the vertices) go into PLY files as the vertex property
//! `value`, described by a header comment; OBJ has no place for them.

use super::MeshData;
use std::fmt::Write as _;
use std::path::Path;

/// Why a mesh could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: unknown mesh format (expected .ply or .obj)")]
    UnknownFormat { path: String },
    #[error("the mesh is inconsistent: {0}")]
    BadMesh(String),
}

/// Mesh file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    Ply,
    Obj,
}

impl MeshFormat {
    /// The format a file name's extension asks for (case-insensitive).
    pub fn from_path(path: &Path) -> Option<MeshFormat> {
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        match ext.as_str() {
            "ply" => Some(MeshFormat::Ply),
            "obj" => Some(MeshFormat::Obj),
            _ => None,
        }
    }
}

fn check(mesh: &MeshData) -> Result<(), ExportError> {
    let n = mesh.positions_angstrom.len();
    if mesh.normals.len() != n {
        return Err(ExportError::BadMesh(format!(
            "{n} positions but {} normals",
            mesh.normals.len()
        )));
    }
    if !mesh.indices.len().is_multiple_of(3) {
        return Err(ExportError::BadMesh(format!(
            "{} indices is not a multiple of 3",
            mesh.indices.len()
        )));
    }
    if n > i32::MAX as usize {
        return Err(ExportError::BadMesh(format!(
            "{n} vertices is more than a PLY int index holds"
        )));
    }
    if !mesh.values.is_empty() && mesh.values.len() != n {
        return Err(ExportError::BadMesh(format!(
            "{n} positions but {} values",
            mesh.values.len()
        )));
    }
    if let Some(&bad) = mesh.indices.iter().find(|&&i| i as usize >= n) {
        return Err(ExportError::BadMesh(format!("index {bad} past the {n} vertices")));
    }
    Ok(())
}

/// The mesh as a binary little-endian PLY file (float positions and normals, int face indices; the
/// per-vertex values, if any, as `property float value`).
pub fn ply_bytes(mesh: &MeshData) -> Result<Vec<u8>, ExportError> {
    ply_bytes_described(mesh, "per-vertex values")
}

/// [`ply_bytes`], the header saying what the per-vertex values are (`value: DESCRIPTION`).
pub fn ply_bytes_described(mesh: &MeshData, values_description: &str) -> Result<Vec<u8>, ExportError> {
    check(mesh)?;
    let n_faces = mesh.indices.len() / 3;
    let with_values = !mesh.values.is_empty();
    let (value_comment, value_property) = if with_values {
        // One line each: a newline in the description would break the header.
        let d = values_description.replace(['\n', '\r'], " ");
        (format!("comment value: {d}\n"), "property float value\n")
    } else {
        (String::new(), "")
    };
    let header = format!(
        "ply\nformat binary_little_endian 1.0\ncomment orbitfield isosurface, positions in Angstrom\n\
         {value_comment}element vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
         property float nx\nproperty float ny\nproperty float nz\n{value_property}\
         element face {n_faces}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.positions_angstrom.len()
    );
    let mut out = Vec::with_capacity(header.len() + mesh.positions_angstrom.len() * 28 + n_faces * 13);
    out.extend_from_slice(header.as_bytes());
    for (k, (p, n)) in mesh.positions_angstrom.iter().zip(&mesh.normals).enumerate() {
        for x in p.iter().chain(n) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        if let Some(v) = mesh.values.get(k) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for t in mesh.indices.chunks_exact(3) {
        out.push(3);
        for &i in t {
            out.extend_from_slice(&(i as i32).to_le_bytes());
        }
    }
    Ok(out)
}

/// The mesh as a Wavefront OBJ text (`v`, `vn`, and `f v//vn` with 1-based indices; per-vertex
/// values are left out).
pub fn obj_string(mesh: &MeshData) -> Result<String, ExportError> {
    check(mesh)?;
    let mut s = String::with_capacity(mesh.positions_angstrom.len() * 64 + mesh.indices.len() * 10);
    s.push_str("# orbitfield isosurface, positions in Angstrom\n");
    for p in &mesh.positions_angstrom {
        let _ = writeln!(s, "v {} {} {}", p[0], p[1], p[2]);
    }
    for n in &mesh.normals {
        let _ = writeln!(s, "vn {} {} {}", n[0], n[1], n[2]);
    }
    for t in mesh.indices.chunks_exact(3) {
        let (a, b, c) = (t[0] + 1, t[1] + 1, t[2] + 1);
        let _ = writeln!(s, "f {a}//{a} {b}//{b} {c}//{c}");
    }
    Ok(s)
}

/// The bytes of a mesh file in the format `path`'s extension names, the PLY header saying what
/// the per-vertex values are.
pub fn mesh_file_bytes(
    path: &Path,
    mesh: &MeshData,
    values_description: &str,
) -> Result<(MeshFormat, Vec<u8>), ExportError> {
    let format = MeshFormat::from_path(path).ok_or_else(|| ExportError::UnknownFormat {
        path: path.display().to_string(),
    })?;
    let bytes = match format {
        MeshFormat::Ply => ply_bytes_described(mesh, values_description)?,
        MeshFormat::Obj => obj_string(mesh)?.into_bytes(),
    };
    Ok((format, bytes))
}
