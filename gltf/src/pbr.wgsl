// glTF 2.0 metallic-roughness shading (glTF 2.0 specification, Appendix B
// "BRDF Implementation"): GGX distribution, Smith-Schlick visibility,
// Schlick Fresnel, Lambert diffuse; two directional lights and a
// hemispherical ambient term scaled by the occlusion map; ACES filmic tone
// mapping and display gamma 2.2.  Adapted from
// shared/scenes/shaders/perf_pbr.wgsl.
//
// Vertex elements (every slot always bound; absent glTF attributes read a
// stride-0 default): 0 POSITION, 1 NORMAL, 2 TANGENT (w = bitangent sign),
// 3 TEXCOORD_0, 4 TEXCOORD_1, 5 COLOR_0.
//
// Vertex constant buffer 0, `Node` (std140, 192 bytes): view_proj, model,
// normal matrix (inverse transpose of model), all column-major.
// Fragment constant buffer 0, `Lights` (96 bytes); 1, `Material` (96 bytes),
// laid out by `material.rs` / `draw.rs`.
// Sampler views and samplers 0..4: base colour (sRGB view), metallic-
// roughness, normal, occlusion, emissive (sRGB view).

struct Node {
    view_proj: mat4x4<f32>,
    model: mat4x4<f32>,
    normal_matrix: mat4x4<f32>,
};

struct Lights {
    eye: vec4<f32>,
    sun_dir: vec4<f32>,
    sun_color: vec4<f32>,
    fill_dir: vec4<f32>,
    fill_color: vec4<f32>,
    // x: ambient intensity, y: exposure.
    ambient: vec4<f32>,
};

struct Material {
    base_color: vec4<f32>,
    // rgb: emissive factor times KHR_materials_emissive_strength.
    emissive: vec4<f32>,
    // metallic, roughness, normal scale, occlusion strength.
    params: vec4<f32>,
    // x: alpha mode (0 OPAQUE, 1 MASK, 2 BLEND), y: alpha cutoff,
    // z: the primitive has NORMAL, w: the primitive has TANGENT.
    alpha: vec4<f32>,
    // TEXCOORD set (0 or 1) of base colour, metallic-roughness, normal,
    // occlusion.
    sets: vec4<f32>,
    // x: emissive TEXCOORD set, y: the material has a normal map.
    sets2: vec4<f32>,
};

@group(0) @binding(0) var<uniform> node: Node;
@group(0) @binding(0) var<uniform> lights: Lights;
@group(0) @binding(1) var<uniform> mat: Material;
@group(1) @binding(0) var base_map: texture_2d<f32>;
@group(1) @binding(1) var mr_map: texture_2d<f32>;
@group(1) @binding(2) var normal_map: texture_2d<f32>;
@group(1) @binding(3) var occlusion_map: texture_2d<f32>;
@group(1) @binding(4) var emissive_map: texture_2d<f32>;
@group(2) @binding(0) var base_smp: sampler;
@group(2) @binding(1) var mr_smp: sampler;
@group(2) @binding(2) var normal_smp: sampler;
@group(2) @binding(3) var occlusion_smp: sampler;
@group(2) @binding(4) var emissive_smp: sampler;

struct VOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) world: vec4<f32>,
    @location(1) normal: vec4<f32>,
    @location(2) tangent: vec4<f32>,
    @location(3) uv: vec4<f32>,
    @location(4) color: vec4<f32>,
};

@vertex
fn vs_main(@location(0) pos: vec4<f32>, @location(1) nrm: vec4<f32>,
           @location(2) tan: vec4<f32>, @location(3) uv0: vec4<f32>,
           @location(4) uv1: vec4<f32>, @location(5) col: vec4<f32>) -> VOut {
    let world = node.model * vec4<f32>(pos.xyz, 1.0);
    var o: VOut;
    o.pos = node.view_proj * world;
    o.world = world;
    o.normal = vec4<f32>((node.normal_matrix * vec4<f32>(nrm.xyz, 0.0)).xyz, 0.0);
    o.tangent = vec4<f32>((node.model * vec4<f32>(tan.xyz, 0.0)).xyz, tan.w);
    o.uv = vec4<f32>(uv0.xy, uv1.xy);
    o.color = col;
    return o;
}

const PI: f32 = 3.14159265;

fn pick(uv: vec4<f32>, which: f32) -> vec2<f32> {
    return select(uv.xy, uv.zw, which > 0.5);
}

fn ggx(n_h: f32, a2: f32) -> f32 {
    let d = n_h * n_h * (a2 - 1.0) + 1.0;
    return a2 / (PI * d * d);
}

fn smith(n_v: f32, n_l: f32, k: f32) -> f32 {
    return (n_v / (n_v * (1.0 - k) + k)) * (n_l / (n_l * (1.0 - k) + k));
}

fn light(n: vec3<f32>, v: vec3<f32>, l: vec3<f32>, radiance: vec3<f32>, albedo: vec3<f32>,
         metallic: f32, roughness: f32) -> vec3<f32> {
    let h = normalize(v + l);
    let n_l = max(dot(n, l), 0.0);
    let n_v = max(dot(n, v), 0.001);
    let n_h = max(dot(n, h), 0.0);
    let v_h = max(dot(v, h), 0.0);
    let a = roughness * roughness;
    let k = (roughness + 1.0) * (roughness + 1.0) / 8.0;
    let f0 = mix(vec3<f32>(0.04), albedo, metallic);
    let f = f0 + (vec3<f32>(1.0) - f0) * pow(1.0 - v_h, 5.0);
    let spec = f * (ggx(n_h, a * a) * smith(n_v, n_l, k) / (4.0 * n_v * max(n_l, 0.001)));
    let diffuse = (vec3<f32>(1.0) - f) * (1.0 - metallic) * albedo / PI;
    return (diffuse + spec) * radiance * n_l;
}

@fragment
fn fs_main(in: VOut) -> @location(0) vec4<f32> {
    // Every derivative and texture sample comes before the MASK discard,
    // in uniform control flow.
    let dpx = dpdx(in.world.xyz);
    let dpy = dpdy(in.world.xyz);
    let uv_n = pick(in.uv, mat.sets.z);
    let duvx = dpdx(uv_n);
    let duvy = dpdy(uv_n);
    let base_tex = textureSample(base_map, base_smp, pick(in.uv, mat.sets.x));
    let mr = textureSample(mr_map, mr_smp, pick(in.uv, mat.sets.y));
    let tn_raw = textureSample(normal_map, normal_smp, uv_n).xyz;
    let ao = textureSample(occlusion_map, occlusion_smp, pick(in.uv, mat.sets.w)).r;
    let emissive_tex = textureSample(emissive_map, emissive_smp, pick(in.uv, mat.sets2.x)).rgb;

    let base = mat.base_color * base_tex * in.color;
    let v = normalize(lights.eye.xyz - in.world.xyz);

    // The face normal, turned towards the viewer: back faces only reach
    // here for double-sided materials, whose back faces the specification
    // shades with reversed normals.
    var ng = normalize(cross(dpx, dpy));
    if (dot(ng, v) < 0.0) {
        ng = -ng;
    }
    var n0 = ng;
    if (mat.alpha.z > 0.5) {
        n0 = normalize(in.normal.xyz);
        if (dot(n0, ng) < 0.0) {
            n0 = -n0;
        }
    }
    var n = n0;
    if (mat.sets2.y > 0.5) {
        let tn = (tn_raw * 2.0 - vec3<f32>(1.0)) * vec3<f32>(mat.params.z, mat.params.z, 1.0);
        var t: vec3<f32>;
        var b: vec3<f32>;
        if (mat.alpha.w > 0.5) {
            t = normalize(in.tangent.xyz - n0 * dot(n0, in.tangent.xyz));
            b = cross(n0, t) * in.tangent.w;
        } else {
            // Derivative-based frame (Schüler, "Normal Mapping Without
            // Precomputed Tangents"); glTF's v runs down the image, so the
            // bitangent (+y of the normal map) points along -v.
            let dp2perp = cross(dpy, n0);
            let dp1perp = cross(n0, dpx);
            let tt = dp2perp * duvx.x + dp1perp * duvy.x;
            let bb = dp2perp * duvx.y + dp1perp * duvy.y;
            let scale = inverseSqrt(max(max(dot(tt, tt), dot(bb, bb)), 1e-20));
            t = tt * scale;
            b = -bb * scale;
        }
        n = normalize(t * tn.x + b * tn.y + n0 * tn.z);
    }

    let albedo = base.rgb;
    let metallic = clamp(mat.params.x * mr.b, 0.0, 1.0);
    let roughness = clamp(mat.params.y * mr.g, 0.04, 1.0);
    var c = light(n, v, normalize(lights.sun_dir.xyz), lights.sun_color.rgb, albedo, metallic, roughness);
    c += light(n, v, normalize(lights.fill_dir.xyz), lights.fill_color.rgb, albedo, metallic, roughness);
    let occlusion = 1.0 + mat.params.w * (ao - 1.0);
    c += albedo * (lights.ambient.x * (0.6 + 0.4 * n.y) * occlusion);
    c += mat.emissive.rgb * emissive_tex;
    c *= lights.ambient.y;
    // ACES filmic approximation, then display gamma.
    let m = (c * (2.51 * c + vec3<f32>(0.03))) / (c * (2.43 * c + vec3<f32>(0.59)) + vec3<f32>(0.14));
    let rgb = pow(clamp(m, vec3<f32>(0.0), vec3<f32>(1.0)), vec3<f32>(1.0 / 2.2));
    if (mat.alpha.x > 0.5 && mat.alpha.x < 1.5 && base.a < mat.alpha.y) {
        discard;
    }
    let alpha = select(1.0, base.a, mat.alpha.x > 1.5);
    return vec4<f32>(rgb, alpha);
}
