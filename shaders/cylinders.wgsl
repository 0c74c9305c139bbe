// Bonds as ray-cast cylinder impostors: a bounding box per instance (36 vertices), each half of
// the cylinder in its atom's colour. Instance layout is `render::gpu::CylinderInstance`
// (src/render/gpu.rs).

struct CylinderIn {
    @location(0) a: vec3<f32>,
    @location(1) b: vec3<f32>,
    @location(2) radius: f32,
    @location(3) color_a: vec4<f32>,
    @location(4) color_b: vec4<f32>,
};

struct CylinderVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) p_view: vec3<f32>,
    @location(1) @interpolate(flat) a_view: vec4<f32>,
    @location(2) @interpolate(flat) b_view: vec3<f32>,
    @location(3) @interpolate(flat) color_a: vec4<f32>,
    @location(4) @interpolate(flat) color_b: vec4<f32>,
};

// Corners of the box as bits: 1 = end b, 2 = +u side, 4 = +v side.
const BOX_CORNERS = array<u32, 36>(
    0u, 1u, 3u, 0u, 3u, 2u,
    4u, 6u, 7u, 4u, 7u, 5u,
    0u, 4u, 5u, 0u, 5u, 1u,
    2u, 3u, 7u, 2u, 7u, 6u,
    0u, 2u, 6u, 0u, 6u, 4u,
    1u, 5u, 7u, 1u, 7u, 3u,
);

@vertex
fn vs_cylinder(@builtin(vertex_index) vi: u32, inst: CylinderIn) -> CylinderVary {
    let a = (globals.view * vec4<f32>(inst.a, 1.0)).xyz;
    let b = (globals.view * vec4<f32>(inst.b, 1.0)).xyz;
    let r = inst.radius;
    var axis = b - a;
    if dot(axis, axis) < 1e-12 {
        axis = vec3<f32>(0.0, 0.0, 1e-6);
    }
    let ax = normalize(axis);
    var helper = vec3<f32>(1.0, 0.0, 0.0);
    if abs(ax.x) > 0.9 {
        helper = vec3<f32>(0.0, 1.0, 0.0);
    }
    let u = normalize(cross(ax, helper));
    let v = cross(ax, u);
    let bits = BOX_CORNERS[vi % 36u];
    var p = a;
    if (bits & 1u) != 0u {
        p = b;
    }
    let su = select(-1.0, 1.0, (bits & 2u) != 0u);
    let sv = select(-1.0, 1.0, (bits & 4u) != 0u);
    p = p + (u * su + v * sv) * (r * 1.02);
    var out: CylinderVary;
    out.clip = globals.proj * vec4<f32>(p, 1.0);
    out.p_view = p;
    out.a_view = vec4<f32>(a, r);
    out.b_view = b;
    out.color_a = inst.color_a;
    out.color_b = inst.color_b;
    return out;
}

@fragment
fn fs_cylinder(in: CylinderVary) -> ImpostorOut {
    let d = normalize(in.p_view);
    let a = in.a_view.xyz;
    let r = in.a_view.w;
    let axis = in.b_view - a;
    let len = length(axis);
    if len < 1e-6 {
        discard;
    }
    let ax = axis / len;
    let ao = -a;
    let d_perp = d - dot(d, ax) * ax;
    let o_perp = ao - dot(ao, ax) * ax;
    let qa = dot(d_perp, d_perp);
    let qb = 2.0 * dot(d_perp, o_perp);
    let qc = dot(o_perp, o_perp) - r * r;
    let disc = qb * qb - 4.0 * qa * qc;
    if disc < 0.0 || qa < 1e-12 {
        discard;
    }
    let t = (-qb - sqrt(disc)) / (2.0 * qa);
    if t <= 0.0 {
        discard;
    }
    let hit = d * t;
    let s = dot(hit - a, ax) / len;
    if s < 0.0 || s > 1.0 {
        discard;
    }
    let rel = hit - a;
    let n = rel - dot(rel, ax) * ax;
    let base = select(in.color_b.rgb, in.color_a.rgb, s < 0.5);
    var out: ImpostorOut;
    out.color = vec4<f32>(shade(base, n, hit), 1.0);
    out.depth = view_depth(hit);
    return out;
}
