// Atoms as ray-cast sphere impostors: one camera-facing quad per instance (triangle strip of 4).
// Instance layout is `render::gpu::SphereInstance` (src/render/gpu.rs).

struct SphereIn {
    @location(0) center_radius: vec4<f32>,
    @location(1) color: vec4<f32>,
};

struct SphereVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) p_view: vec3<f32>,
    @location(1) @interpolate(flat) center_view: vec4<f32>,
    @location(2) @interpolate(flat) color: vec4<f32>,
};

@vertex
fn vs_sphere(@builtin(vertex_index) vi: u32, inst: SphereIn) -> SphereVary {
    let corner = vec2<f32>(f32(vi & 1u) * 2.0 - 1.0, f32((vi >> 1u) & 1u) * 2.0 - 1.0);
    let c = (globals.view * vec4<f32>(inst.center_radius.xyz, 1.0)).xyz;
    let r = inst.center_radius.w;
    let to_eye = normalize(-c);
    var up = vec3<f32>(0.0, 1.0, 0.0);
    if abs(to_eye.y) > 0.99 {
        up = vec3<f32>(1.0, 0.0, 0.0);
    }
    let right = normalize(cross(up, to_eye));
    let up2 = cross(to_eye, right);
    // A quad at the sphere's front, of half-size r, covers its whole silhouette.
    let p = c + to_eye * r + (right * corner.x + up2 * corner.y) * (r * 1.02);
    var out: SphereVary;
    out.clip = globals.proj * vec4<f32>(p, 1.0);
    out.p_view = p;
    out.center_view = vec4<f32>(c, r);
    out.color = inst.color;
    return out;
}

@fragment
fn fs_sphere(in: SphereVary) -> ImpostorOut {
    let dir = normalize(in.p_view);
    let c = in.center_view.xyz;
    let r = in.center_view.w;
    let b = dot(dir, c);
    let disc = b * b - (dot(c, c) - r * r);
    if disc < 0.0 {
        discard;
    }
    let t = b - sqrt(disc);
    if t <= 0.0 {
        discard;
    }
    let hit = dir * t;
    var out: ImpostorOut;
    out.color = vec4<f32>(shade(in.color.rgb, (hit - c) / r, hit), 1.0);
    out.depth = view_depth(hit);
    return out;
}
