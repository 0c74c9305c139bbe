// Triangle meshes (isosurface lobes): Blinn-Phong, two-sided, depth cue. `fs_opaque` writes the
// colour directly; `fs_oit` accumulates weighted blended order-independent transparency into the
// accumulation and revealage targets that `oit_composite.wgsl` resolves.
// A mesh may be coloured by a second field (e.g. a density isosurface by the electrostatic
// potential): the field is a 3-D texture of lattice values read with `textureLoad` and interpolated
// trilinearly here, mapped through the colormap table of the uniform.
// Or each vertex carries its own colour (`_colors` entry points, a second vertex buffer, no texture
// bound): a categorical colour, or a value mapped through the colormap after interpolation across
// the triangle (the CPU's samples of a colouring volume where the adapter has no 3-D textures).
// Vertex layouts are `render::gpu::MeshVertex` and `render::gpu::MeshVertexColor`, the per-mesh
// uniform `render::gpu::MeshUniform` (src/render/gpu.rs).

const COLORMAP_ENTRIES: u32 = 64u;

struct MeshUniform {
    // rgb and opacity.
    color: vec4<f32>,
    // Colour field: first lattice point (Angstrom) and, in w, 1 when colouring by the field.
    field_origin: vec4<f32>,
    // Inverse lattice steps (per Angstrom).
    field_inv_step: vec4<f32>,
    // x: value at the colormap's start, y: at its end.
    field_range: vec4<f32>,
    colormap: array<vec4<f32>, COLORMAP_ENTRIES>,
};

@group(1) @binding(0) var<uniform> mesh: MeshUniform;
@group(1) @binding(1) var color_field: texture_3d<f32>;

struct MeshIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
};

struct MeshVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) p_view: vec3<f32>,
    @location(1) n_view: vec3<f32>,
    @location(2) p_world: vec3<f32>,
};

// Twin of `render::gpu::MeshVertexColor`.
struct MeshColorIn {
    @location(2) value: f32,
    // rgb and, in a, 1 for a categorical colour, 0 to map `value` through the colormap.
    @location(3) color: vec4<f32>,
};

struct MeshColorVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) p_view: vec3<f32>,
    @location(1) n_view: vec3<f32>,
    @location(2) p_world: vec3<f32>,
    @location(3) value: f32,
    @location(4) color: vec4<f32>,
};

@vertex
fn vs_mesh(v: MeshIn) -> MeshVary {
    return transform(v);
}

fn transform(v: MeshIn) -> MeshVary {
    var out: MeshVary;
    let p = globals.view * vec4<f32>(v.position, 1.0);
    out.clip = globals.proj * p;
    out.p_view = p.xyz;
    out.n_view = (globals.view * vec4<f32>(v.normal, 0.0)).xyz;
    out.p_world = v.position;
    return out;
}

@vertex
fn vs_mesh_colors(v: MeshIn, c: MeshColorIn) -> MeshColorVary {
    let m = transform(v);
    var out: MeshColorVary;
    out.clip = m.clip;
    out.p_view = m.p_view;
    out.n_view = m.n_view;
    out.p_world = m.p_world;
    out.value = c.value;
    out.color = c.color;
    return out;
}

// Trilinear value of the colour field at a point (Angstrom), clamped to the lattice.
fn field_value(p: vec3<f32>) -> f32 {
    let dims = vec3<i32>(textureDimensions(color_field));
    let hi = vec3<f32>(max(dims - vec3<i32>(1), vec3<i32>(0)));
    let x = clamp((p - mesh.field_origin.xyz) * mesh.field_inv_step.xyz, vec3<f32>(0.0), hi);
    let i0 = vec3<i32>(floor(x));
    let i1 = min(i0 + vec3<i32>(1), dims - vec3<i32>(1));
    let f = x - vec3<f32>(i0);
    let c000 = textureLoad(color_field, vec3<i32>(i0.x, i0.y, i0.z), 0).r;
    let c100 = textureLoad(color_field, vec3<i32>(i1.x, i0.y, i0.z), 0).r;
    let c010 = textureLoad(color_field, vec3<i32>(i0.x, i1.y, i0.z), 0).r;
    let c110 = textureLoad(color_field, vec3<i32>(i1.x, i1.y, i0.z), 0).r;
    let c001 = textureLoad(color_field, vec3<i32>(i0.x, i0.y, i1.z), 0).r;
    let c101 = textureLoad(color_field, vec3<i32>(i1.x, i0.y, i1.z), 0).r;
    let c011 = textureLoad(color_field, vec3<i32>(i0.x, i1.y, i1.z), 0).r;
    let c111 = textureLoad(color_field, vec3<i32>(i1.x, i1.y, i1.z), 0).r;
    let c00 = mix(c000, c100, f.x);
    let c10 = mix(c010, c110, f.x);
    let c01 = mix(c001, c101, f.x);
    let c11 = mix(c011, c111, f.x);
    return mix(mix(c00, c10, f.y), mix(c01, c11, f.y), f.z);
}

fn colormap(t: f32) -> vec3<f32> {
    let x = clamp(t, 0.0, 1.0) * f32(COLORMAP_ENTRIES - 1u);
    let i = min(u32(floor(x)), COLORMAP_ENTRIES - 2u);
    let f = x - f32(i);
    return mix(mesh.colormap[i].rgb, mesh.colormap[i + 1u].rgb, f);
}

// A field value through the colormap and range of the uniform.
fn value_color(v: f32) -> vec3<f32> {
    let span = mesh.field_range.y - mesh.field_range.x;
    var t = 0.5;
    if abs(span) > 0.0 {
        t = (v - mesh.field_range.x) / span;
    }
    return colormap(t);
}

fn base_color(p_world: vec3<f32>) -> vec3<f32> {
    if mesh.field_origin.w < 0.5 {
        return mesh.color.rgb;
    }
    return value_color(field_value(p_world));
}

fn lit(base: vec3<f32>, in: MeshVary) -> vec3<f32> {
    var n = in.n_view;
    if dot(n, n) < 1e-20 {
        n = vec3<f32>(0.0, 0.0, 1.0);
    }
    if dot(n, -in.p_view) < 0.0 {
        n = -n;
    }
    return shade(base, n, in.p_view);
}

fn mesh_color(in: MeshVary) -> vec3<f32> {
    return lit(base_color(in.p_world), in);
}

// Meshes in one colour: the `_flat` entry points read no colour field, so their pipelines bind no
// 3-D texture (binding one for every draw costs a software rasteriser memory it never returns).
fn flat_color(in: MeshVary) -> vec3<f32> {
    return lit(mesh.color.rgb, in);
}

fn vary(in: MeshColorVary) -> MeshVary {
    var out: MeshVary;
    out.clip = in.clip;
    out.p_view = in.p_view;
    out.n_view = in.n_view;
    out.p_world = in.p_world;
    return out;
}

// Meshes with a colour per vertex.
fn vertex_color(in: MeshColorVary) -> vec3<f32> {
    let base = mix(value_color(in.value), in.color.rgb, clamp(in.color.a, 0.0, 1.0));
    return lit(base, vary(in));
}

@fragment
fn fs_opaque(in: MeshVary) -> @location(0) vec4<f32> {
    return vec4<f32>(mesh_color(in), 1.0);
}

@fragment
fn fs_opaque_flat(in: MeshVary) -> @location(0) vec4<f32> {
    return vec4<f32>(flat_color(in), 1.0);
}

// Transparency where the weighted blended targets do not blend: the surface over what is drawn.
@fragment
fn fs_alpha(in: MeshVary) -> @location(0) vec4<f32> {
    return vec4<f32>(mesh_color(in), clamp(mesh.color.a, 0.0, 1.0));
}

@fragment
fn fs_opaque_colors(in: MeshColorVary) -> @location(0) vec4<f32> {
    return vec4<f32>(vertex_color(in), 1.0);
}

@fragment
fn fs_alpha_flat(in: MeshVary) -> @location(0) vec4<f32> {
    return vec4<f32>(flat_color(in), clamp(mesh.color.a, 0.0, 1.0));
}

@fragment
fn fs_alpha_colors(in: MeshColorVary) -> @location(0) vec4<f32> {
    return vec4<f32>(vertex_color(in), clamp(mesh.color.a, 0.0, 1.0));
}

struct OitOut {
    @location(0) accum: vec4<f32>,
    @location(1) reveal: vec4<f32>,
};

@fragment
fn fs_oit(in: MeshVary) -> OitOut {
    return oit(mesh_color(in), in);
}

@fragment
fn fs_oit_flat(in: MeshVary) -> OitOut {
    return oit(flat_color(in), in);
}

@fragment
fn fs_oit_colors(in: MeshColorVary) -> OitOut {
    return oit(vertex_color(in), vary(in));
}

fn oit(c: vec3<f32>, in: MeshVary) -> OitOut {
    let a = clamp(mesh.color.a, 0.0, 1.0);
    let z = in.clip.z;
    let w = clamp(pow(min(1.0, a * 10.0) + 0.01, 3.0) * 1e8 * pow(1.0 - z * 0.9, 3.0), 1e-2, 3e3);
    var out: OitOut;
    out.accum = vec4<f32>(c * a, a) * w;
    out.reveal = vec4<f32>(a, a, a, a);
    return out;
}
