// Triangle meshes (isosurface lobes): Blinn-Phong, two-sided, depth cue. `fs_opaque` writes the
// colour directly; `fs_oit` accumulates weighted blended order-independent transparency into the
// accumulation and revealage targets that `oit_composite.wgsl` resolves.
// Vertex layout is `render::gpu::MeshVertex`, the per-mesh uniform `render::gpu::MeshUniform`
// (src/render/gpu.rs).

struct MeshUniform {
    // rgb and opacity.
    color: vec4<f32>,
};

@group(1) @binding(0) var<uniform> mesh: MeshUniform;

struct MeshIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
};

struct MeshVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) p_view: vec3<f32>,
    @location(1) n_view: vec3<f32>,
};

@vertex
fn vs_mesh(v: MeshIn) -> MeshVary {
    var out: MeshVary;
    let p = globals.view * vec4<f32>(v.position, 1.0);
    out.clip = globals.proj * p;
    out.p_view = p.xyz;
    out.n_view = (globals.view * vec4<f32>(v.normal, 0.0)).xyz;
    return out;
}

fn mesh_color(in: MeshVary) -> vec3<f32> {
    var n = in.n_view;
    if dot(n, n) < 1e-20 {
        n = vec3<f32>(0.0, 0.0, 1.0);
    }
    if dot(n, -in.p_view) < 0.0 {
        n = -n;
    }
    return shade(mesh.color.rgb, n, in.p_view);
}

@fragment
fn fs_opaque(in: MeshVary) -> @location(0) vec4<f32> {
    return vec4<f32>(mesh_color(in), 1.0);
}

struct OitOut {
    @location(0) accum: vec4<f32>,
    @location(1) reveal: vec4<f32>,
};

@fragment
fn fs_oit(in: MeshVary) -> OitOut {
    let c = mesh_color(in);
    let a = clamp(mesh.color.a, 0.0, 1.0);
    let z = in.clip.z;
    let w = clamp(pow(min(1.0, a * 10.0) + 0.01, 3.0) * 1e8 * pow(1.0 - z * 0.9, 3.0), 1e-2, 3e3);
    var out: OitOut;
    out.accum = vec4<f32>(c * a, a) * w;
    out.reveal = vec4<f32>(a, a, a, a);
    return out;
}
