// A slice plane through a field: a quad textured with the field already mapped through a colormap
// on the CPU. Uniform is `render::gpu::SliceUniform` (src/render/gpu.rs).

struct SliceUniform {
    // Corner of the quad (xyz, world Angstrom) and the two edge vectors from it.
    origin: vec4<f32>,
    edge_u: vec4<f32>,
    edge_v: vec4<f32>,
};

@group(1) @binding(0) var<uniform> slice: SliceUniform;
@group(1) @binding(1) var slice_texture: texture_2d<f32>;
@group(1) @binding(2) var slice_sampler: sampler;

struct SliceVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs_slice(@builtin(vertex_index) vi: u32) -> SliceVary {
    let uv = vec2<f32>(f32(vi & 1u), f32((vi >> 1u) & 1u));
    let p = slice.origin.xyz + slice.edge_u.xyz * uv.x + slice.edge_v.xyz * uv.y;
    var out: SliceVary;
    out.clip = globals.view_proj * vec4<f32>(p, 1.0);
    out.uv = uv;
    return out;
}

@fragment
fn fs_slice(in: SliceVary) -> @location(0) vec4<f32> {
    let c = textureSample(slice_texture, slice_sampler, in.uv);
    // Texels outside the volume (oblique planes) are transparent: not drawn.
    if c.a < 0.5 {
        discard;
    }
    return vec4<f32>(c.rgb, 1.0);
}
