// Resolves weighted blended order-independent transparency: averages the accumulated colour and
// blends it over the opaque image with coverage 1 - revealage. Drawn as one fullscreen triangle.

@group(0) @binding(0) var accum_texture: texture_2d<f32>;
@group(0) @binding(1) var reveal_texture: texture_2d<f32>;

@vertex
fn vs_fullscreen(@builtin(vertex_index) vi: u32) -> @builtin(position) vec4<f32> {
    let x = f32(i32(vi & 1u) * 4 - 1);
    let y = f32(i32(vi >> 1u) * 4 - 1);
    return vec4<f32>(x, y, 0.0, 1.0);
}

@fragment
fn fs_composite(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    let p = vec2<i32>(pos.xy);
    let reveal = textureLoad(reveal_texture, p, 0).r;
    if reveal > 0.999 {
        discard;
    }
    let accum = textureLoad(accum_texture, p, 0);
    let avg = accum.rgb / max(accum.a, 1e-5);
    return vec4<f32>(avg, 1.0 - reveal);
}
