//! Emitting the cartoon's triangles: tubes between rings (bands of quads with their normals and colours) and the boxes of nucleic-acid bases.

use super::*;

pub(super) fn emit_tube(rings: &[Ring], sides: usize, out: &mut Out<'_>) {
    let angles = section_angles(sides);
    // The angles' powers for the exponent of the section last drawn (recomputed when it changes).
    let mut powers_e = f32::NAN;
    let mut powers: Vec<SectionPowers> = Vec::with_capacity(sides);
    let mut ring_vertices = |ring: &Ring, flat: Option<Vec3>, out: &mut Out<'_>| -> u32 {
        if ring.profile.e.to_bits() != powers_e.to_bits() {
            powers_e = ring.profile.e;
            powers.clear();
            powers.extend(angles.iter().map(|&(c, s)| SectionPowers::new(powers_e, c, s)));
        }
        let binormal = ring.tangent.cross(ring.side);
        let mut first = 0;
        for (j, (&(c, s), &w)) in angles.iter().zip(&powers).enumerate() {
            let (p, n) = ring.profile.place(w);
            let pos = ring.center.add(ring.side.scale(p[0])).add(binormal.scale(p[1]));
            let normal = match flat.or(ring.flat) {
                Some(f) => f,
                None => ring
                    .side
                    .scale(n[0])
                    .add(binormal.scale(n[1]))
                    .normalized()
                    .unwrap_or_else(|| ring.side.scale(c).add(binormal.scale(s))),
            };
            let v = out.vertex(pos, normal, ring.color, ring.value);
            if j == 0 {
                first = v;
            }
        }
        first
    };
    let (Some(first), Some(last)) = (rings.first(), rings.last()) else {
        return;
    };
    let s = sides as u32;
    // The next vertex around a ring (j + 1) % s, without a division.
    let after = |j: u32| if j + 1 == s { 0 } else { j + 1 };
    // Start cap: normals against the tangent.
    let back = first.tangent.scale(-1.0);
    let centre = out.vertex(first.center, back, first.color, first.value);
    let rim = ring_vertices(first, Some(back), out);
    for j in 0..s {
        out.triangle(centre, rim + after(j), rim + j);
    }
    let mut previous: Option<u32> = None;
    for ring in rings {
        let start = ring_vertices(ring, None, out);
        if let Some(p) = previous
            && ring.joined
        {
            for j in 0..s {
                let (a, b) = (p + j, p + after(j));
                let (c, d) = (start + after(j), start + j);
                out.triangle(a, b, c);
                out.triangle(a, c, d);
            }
        }
        previous = Some(start);
    }
    // End cap: normals along the tangent.
    let front = last.tangent;
    let centre = out.vertex(last.center, front, last.color, last.value);
    let rim = ring_vertices(last, Some(front), out);
    for j in 0..s {
        out.triangle(centre, rim + j, rim + after(j));
    }
}

/// The base slabs of a nucleic-acid run: a stem from the backbone trace point to C1' and a flat box
/// from C1' to the base tip, each a closed box.
pub(super) fn base_boxes(res: &[NucleicResidue], params: &CartoonParams) -> Vec<SlabBox> {
    let mut out = Vec::new();
    if params.style != Style::Cartoon {
        return out;
    }
    for r in res {
        let Some(base) = r.base else { continue };
        if !(finite(base.root) && finite(base.tip) && finite(base.plane)) {
            continue;
        }
        let (root, tip, plane) = (Vec3(base.root), Vec3(base.tip), Vec3(base.plane));
        let Some(along) = tip.sub(root).normalized() else {
            continue;
        };
        let across = plane.sub(root);
        let across = across
            .sub(along.scale(across.dot(along)))
            .normalized()
            .unwrap_or_else(|| along.any_perpendicular());
        let normal = along.cross(across);
        let length = tip.sub(root).length();
        out.push(SlabBox {
            center: root.lerp(tip, 0.5),
            axes: [along, across, normal],
            half: [
                0.5 * length,
                0.5 * params.base_width_angstrom,
                0.5 * params.base_thickness_angstrom,
            ],
            color: r.color,
            value: r.value,
        });
        // The stem joins the base to the backbone tube.
        let trace = Vec3(r.trace);
        if let Some(stem) = root.sub(trace).normalized() {
            let side = stem.any_perpendicular();
            let half = 0.5 * params.base_thickness_angstrom;
            out.push(SlabBox {
                center: trace.lerp(root, 0.5),
                axes: [stem, side, stem.cross(side)],
                half: [0.5 * root.sub(trace).length(), half, half],
                color: r.color,
                value: r.value,
            });
        }
    }
    out
}

/// A closed box with flat faces (24 vertices, 12 triangles).
pub(super) fn emit_box(b: &SlabBox, out: &mut Out<'_>) {
    let SlabBox {
        center,
        axes,
        half,
        color,
        value,
    } = *b;
    for (k, &axis) in axes.iter().enumerate() {
        let (u, v) = (axes[(k + 1) % 3], axes[(k + 2) % 3]);
        let (hu, hv) = (half[(k + 1) % 3], half[(k + 2) % 3]);
        for sign in [1.0f32, -1.0] {
            let n = axis.scale(sign);
            let c = center.add(n.scale(half[k]));
            // Corners counter-clockwise seen from outside: u x v = axis, so reverse for -axis.
            let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
            let mut idx = [0u32; 4];
            for (m, &(a, b)) in corners.iter().enumerate() {
                let p = c.add(u.scale(a * hu)).add(v.scale(b * hv * sign));
                idx[m] = out.vertex(p, n, color, value);
            }
            out.triangle(idx[0], idx[1], idx[2]);
            out.triangle(idx[0], idx[2], idx[3]);
        }
    }
}
