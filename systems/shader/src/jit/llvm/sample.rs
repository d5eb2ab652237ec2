//! Texture lookups generated inside a region (llvmpipe's counterpart:
//! `lp_bld_sample_soa.c`, `lp_build_sample_soa_code`, which generates the
//! sampling code of each static sampler state into the shader's function).
//!
//! What is generated is one lookup the `QuadSampler` plans as bilinear
//! RGBA8 at one constant level ([`InlineSample`]; the Rust side is
//! `texture/inline.rs`): `bilinear_taps_avx2`, `bilinear_fetch_avx2`,
//! `filter_pairs_avx2` and `channels_f32` of `texture.rs`, the same
//! integer and float operations in the same order, so the interpreter's
//! bits.  The wrap modes and the channel map are constants of the code;
//! the level's size, strides and texels are read from the call's
//! [`TexDesc`] (loop-invariant loads, hoisted out of the group loop).
//!
//! Per group the code branches three ways, as the Rust kernel does:
//! * every lane's coordinates scale to i32: the **pair fetch** (one
//!   8-byte load per lane and row) where each lane's two columns are
//!   adjacent, else **four gathers**;
//! * otherwise (coordinates beyond i32 after scaling, or NaN) the group
//!   calls [`inline_fallback`], the interpreter's general path.
//!
//! In a 16-lane region (`E::w16`) the code is the same at twice the width:
//! a branch is taken for both groups of the step (a test holds where it
//! holds for every lane of both), the quad-level values (`rho`, the level
//! layouts' row strides) are per quad of either group, and what is per
//! lane or per group in the hardware stays so: a gather or the texel loads
//! of each group, and one call of the fallback per group, through an
//! AVX-512 trampoline.  Each lane's operations are the same, so are the
//! bits.

use std::fmt::Write as _;

use super::{E, V, VI};
use crate::ir::TexOp;
use crate::jit::InlineHow;
use crate::texture::{
    InlineLod, InlineSample, LevelCol, TABLE_LEVELS, TexDesc, inline_fallback, same_coordinates,
};

/// The intrinsics the generated lookups call, and `@tex_fallback`, the
/// trampoline to [`inline_fallback`] (`p`: the byte pointer type, `vp`
/// the `<8 x float>` pointer type).
///
/// The trampoline is `preserve_allcc`: it saves every register it uses,
/// the ymm registers included, so the regions' group loops keep their
/// values and loop invariants in registers across the (cold) call.  With
/// a C call in the loop every ymm register was clobbered at it, and LLVM
/// spilled 7 values ahead of each lookup's branch and reloaded its splat
/// invariants from the stack in the hot path (postprocess: 0.78x the
/// time with the trampoline).  LLVM's `vzeroupper` insertion does not
/// know the convention: it put a `vzeroupper` after the trampoline's
/// restores, zeroing the upper halves of the caller's registers (lanes
/// 4-7 of every value live across the call; `tests/jit_texture.rs`
/// caught it).  So the trampoline turns the insertion off
/// (`-vzeroupper`) and clears the upper halves itself, before the C call
/// only.
pub(super) fn decls(p: &str, vp: &str, wide: bool) -> String {
    let helper: unsafe extern "C" fn(*const TexDesc, *mut ferropipe_components::shader::Lanes) =
        inline_fallback;
    let addr = helper as usize as i64;
    let fty = if p == "ptr" {
        "ptr".to_string()
    } else {
        format!("void ({p}, {vp})*")
    };
    let trampoline = |name: &str, attrs: &str| {
        format!(
            "define internal preserve_allcc void @{name}({p} %d, {vp} %b) {attrs} {{
entry:
  %fp = inttoptr i64 {addr} to {fty}
  call void @llvm.x86.avx.vzeroupper()
  call void %fp({p} %d, {vp} %b)
  ret void
}}
"
        )
    };
    // A 16-lane region's trampoline is AVX-512 code, so that it saves the
    // registers such a caller keeps values in: all of zmm0-31 and the
    // mask registers.  The 256-bit one saves ymm0-15 only, and its
    // `vzeroupper` would clear the upper halves of zmm0-15 (lanes 8-15).
    let wide = if wide {
        trampoline("tex_fallback16", "#3")
            + "attributes #3 = { cold noinline nounwind \"target-cpu\"=\"x86-64-v4\" \"target-features\"=\"-vzeroupper\" }
declare <32 x i16> @llvm.x86.avx512.pmul.hr.sw.512(<32 x i16>, <32 x i16>)
declare <16 x i32> @llvm.x86.avx512.permvar.si.512(<16 x i32>, <16 x i32>)
"
    } else {
        String::new()
    };
    format!(
        "declare <4 x i64> @llvm.x86.avx2.gather.d.q.256(<4 x i64>, {p}, <4 x i32>, <4 x i64>, i8)
declare <8 x i32> @llvm.x86.avx2.gather.d.d.256(<8 x i32>, {p}, <8 x i32>, <8 x i32>, i8)
declare <16 x i16> @llvm.x86.avx2.pmul.hr.sw(<16 x i16>, <16 x i16>)
declare <8 x i32> @llvm.x86.avx2.permd(<8 x i32>, <8 x i32>)
{}{wide}declare void @llvm.x86.avx.vzeroupper()
attributes #1 = {{ cold noinline nounwind \"target-cpu\"=\"x86-64-v3\" \"target-features\"=\"-vzeroupper\" }}
!1 = !{{!\"branch_weights\", i32 4096, i32 1}}
",
        trampoline("tex_fallback", "#1")
    )
}

/// Whether lookup `u` (`hu`) may join `group`, a run of adjacent lookups
/// generated with one addressing: the key says it shares its
/// predecessor's (same wrap modes, LOD source and filter, same layout),
/// it reads the same coordinate registers, and no lookup of the group
/// writes them.
pub(super) fn shares(group: &[(&TexOp, InlineHow)], u: &TexOp, hu: InlineHow) -> bool {
    hu.shares
        && hu.spec.same_addressing(&group[0].1.spec)
        && group.iter().all(|(g, _)| same_coordinates(g, u))
}

/// Whether the pair fetch gathers ([`ferropipe_components::simd::fast_gathers`],
/// as the Rust kernel's `fetch_pairs_avx2` chooses); the tests force
/// each form on the compiling thread.
fn gathers() -> bool {
    #[cfg(test)]
    if let Some(g) = tests::FORCE_GATHERS.get() {
        return g;
    }
    ferropipe_components::simd::fast_gathers()
}

/// One descriptor slot's values, loaded and splatted in the region's
/// entry block (ahead of the group loop: a later lookup's loads, behind
/// an earlier one's fallback branch, would not be hoisted).
#[derive(Clone)]
pub(super) struct DescVals {
    /// The descriptor (the fallback's argument).
    d: String,
    words: String,
    max_pair: String,
    max_word: String,
    /// [`InlineLod::Const`]'s level.
    level: Lv,
    /// `size[0]`, `size[1]`, `first`, `last` in every lane; the view's
    /// first level and the fits mask as scalars.
    size_x: String,
    size_y: String,
    first: String,
    last: String,
    /// The view's first level in every lane (`TexDesc::cols`' entry 0).
    table_first: String,
}

/// One level layout per quad (lanes 0-3, 4-7, ...), as the Rust kernel's
/// `LaneLevels`, with what the kernel derives from it.
#[derive(Clone)]
struct Lv {
    /// Width and height (NEAREST's scale).
    width: String,
    height: String,
    /// `sitofp(width << 8)`, `sitofp(height << 8)`.
    width_f: String,
    height_f: String,
    /// `width - 1`, `width - 2`, `height - 1`.
    last_x: String,
    last_x_m1: String,
    last_y: String,
    stride: String,
    /// The row stride of each quad (lanes 0-3, 4-7, and at 16 lanes
    /// 8-11, 12-15) as `i32` scalars: an interior lookup's second row is
    /// then the first row's texel index from a pointer one row further on
    /// ([`E::pair_row`]), so the two rows share their index extractions.
    stride_q: Vec<String>,
    base: String,
    /// Every lane's `width - 1 > 0` (CLAMP_TO_EDGE's pair fetch applies).
    wide: String,
}

impl Lv {
    /// The LLVM type of each value [`Lv::values`] lists, in a region of
    /// `e`'s width.
    fn types(e: &E) -> Vec<&'static str> {
        let (vt, vit) = (e.v(), e.vi());
        let mut t = vec![vit, vit, vt, vt, vit, vit, vit, vit];
        t.extend(std::iter::repeat_n("i32", e.lanes() / 4));
        t.extend([vit, "i1"]);
        t
    }

    /// The layout's values, in [`Lv::types`]' order.
    fn values(&self) -> Vec<String> {
        let mut v = vec![
            self.width.clone(),
            self.height.clone(),
            self.width_f.clone(),
            self.height_f.clone(),
            self.last_x.clone(),
            self.last_x_m1.clone(),
            self.last_y.clone(),
            self.stride.clone(),
        ];
        v.extend(self.stride_q.iter().cloned());
        v.extend([self.base.clone(), self.wide.clone()]);
        v
    }

    fn from_values(mut v: Vec<String>) -> Lv {
        let wide = v.pop().expect("Lv::types");
        let base = v.pop().expect("Lv::types");
        let stride_q = v.split_off(8);
        let [
            width,
            height,
            width_f,
            height_f,
            last_x,
            last_x_m1,
            last_y,
            stride,
        ] = <[String; 8]>::try_from(v).expect("Lv::types");
        Lv {
            width,
            height,
            width_f,
            height_f,
            last_x,
            last_x_m1,
            last_y,
            stride,
            stride_q,
            base,
            wide,
        }
    }
}

/// One lookup's scaled coordinates (`avx2_lanes::scaled` on each axis).
struct Scaled {
    /// The coordinates times the level's size (x256), whose range test
    /// ([`E::in_range`]) the integer values below depend on.
    sx: String,
    sy: String,
    iy: String,
    wy: String,
    i0: String,
    wx: String,
}

impl E {
    /// Loads descriptor `slot` of the call (in the entry block).
    pub(super) fn desc_vals(&mut self, slot: u8) -> DescVals {
        use std::mem::offset_of;
        let b = self.ptr("i8");
        let tf = self.desc_field("%ctx", offset_of!(super::super::RegionCtx, tex), &b);
        let d = self.ins(&format!(
            "getelementptr i8, {b} {tf}, i64 {}",
            slot as usize * std::mem::size_of::<TexDesc>()
        ));
        let words = self.desc_field(&d, offset_of!(TexDesc, words), &b);
        let field = |e: &mut E, off: usize| e.desc_field(&d, off, "i32");
        let max_pair = field(self, offset_of!(TexDesc, max_pair));
        let max_word = field(self, offset_of!(TexDesc, max_word));
        let [width, height, stride, base] = [
            offset_of!(TexDesc, width),
            offset_of!(TexDesc, height),
            offset_of!(TexDesc, row_stride),
            offset_of!(TexDesc, base),
        ]
        .map(|off| {
            let x = field(self, off);
            (self.splat_i(&x), x)
        });
        let stride_q = vec![stride.1; self.lanes() / 4];
        let level = self.lv(&width.0, &height.0, (&stride.0, stride_q), &base.0, None);
        let sizes = offset_of!(TexDesc, size);
        let [size_x, size_y] = [sizes, sizes + 4].map(|off| {
            let x = self.desc_field(&d, off, "float");
            self.splat_f(&x)
        });
        let first = field(self, offset_of!(TexDesc, first));
        let last = field(self, offset_of!(TexDesc, last));
        DescVals {
            words,
            max_pair: self.splat_i(&max_pair),
            max_word: self.splat_i(&max_word),
            level,
            size_x,
            size_y,
            first: self.splat_i(&first),
            last: self.splat_i(&last),
            table_first: {
                let x = field(self, offset_of!(TexDesc, table_first));
                self.splat_i(&x)
            },
            d,
        }
    }

    /// [`Lv`] of the per-lane width, height, row stride (with its
    /// [`Lv::stride_q`]) and base; `scaled`: [`Lv::width_f`] and
    /// [`Lv::height_f`] where the caller has them (`TexDesc::cols`),
    /// else they are computed.
    fn lv(
        &mut self,
        width: &str,
        height: &str,
        (stride, stride_q): (&str, Vec<String>),
        base: &str,
        scaled: Option<[String; 2]>,
    ) -> Lv {
        let (vt, vit) = (self.v(), self.vi());
        let [width_f, height_f] = scaled.unwrap_or_else(|| {
            [width, height].map(|len| {
                let l8 = self.iop("shl", len, &self.isp(8));
                self.ins(&format!("sitofp {vit} {l8} to {vt}"))
            })
        });
        let last_x = self.iop("sub", width, &self.isp(1));
        let gt = self.icmp_i("sgt", &last_x, "zeroinitializer");
        Lv {
            width: width.to_string(),
            height: height.to_string(),
            width_f,
            height_f,
            last_x_m1: self.iop("sub", width, &self.isp(2)),
            last_y: self.iop("sub", height, &self.isp(1)),
            last_x,
            stride: stride.to_string(),
            stride_q,
            base: base.to_string(),
            wide: self.all_lanes(&gt),
        }
    }

    /// Column `col` of `TexDesc::cols` at each lane's table index `idx`
    /// (`level - table_first`, in `0..TABLE_LEVELS` where it matters):
    /// in 8 lanes `vpermd` of entries 0-7 and of 8-15 (it reads the
    /// index's low three bits), blended on `idx > 7`; in 16 lanes one
    /// `vpermd` of all 16 (the index's low four bits).  The loads do not
    /// depend on the level, so only the permutes and the blend sit between
    /// the level and its layout.
    fn level_col(&mut self, dv: &DescVals, idx: &str, col: LevelCol) -> String {
        let (vit, mt) = (self.vi(), self.m1());
        use std::mem::offset_of;
        const _: () = assert!(TABLE_LEVELS == 16);
        let b = self.ptr("i8");
        let vp = self.ptr(vit);
        let perm = if self.w16 {
            "llvm.x86.avx512.permvar.si.512"
        } else {
            "llvm.x86.avx2.permd"
        };
        let half = |e: &mut E, k: usize| {
            let off = offset_of!(TexDesc, cols) + (col as usize * TABLE_LEVELS + 8 * k) * 4;
            let p = e.ins(&format!("getelementptr i8, {b} {}, i64 {off}", dv.d));
            let q = e.cast(&p, vit);
            let v = e.ins(&format!(
                "load {vit}, {vp} {q}, align 4, !invariant.load !0"
            ));
            e.ins(&format!("call {vit} @{perm}({vit} {v}, {vit} {idx})"))
        };
        let lo = half(self, 0);
        if self.w16 {
            return lo;
        }
        let hi = half(self, 1);
        let upper = self.icmp_i("sgt", idx, &self.isp(7));
        self.ins(&format!("select {mt} {upper}, {vit} {hi}, {vit} {lo}"))
    }

    /// Each lane's table index of levels `l`.
    fn table_index(&mut self, dv: &DescVals, l: &str) -> String {
        self.iop("sub", l, &dv.table_first)
    }

    /// The [`Lv`] of the levels whose table indices are `idx`, which
    /// [`Self::level_fits`] holds for.
    fn lv_of(&mut self, dv: &DescVals, idx: &str) -> Lv {
        let (vt, vit) = (self.v(), self.vi());
        let [w, h, s, base] = [
            LevelCol::Width,
            LevelCol::Height,
            LevelCol::RowStride,
            LevelCol::Base,
        ]
        .map(|c| self.level_col(dv, idx, c));
        let stride_q = (0..self.lanes() / 4)
            .map(|q| self.ins(&format!("extractelement {vit} {s}, i32 {}", 4 * q)))
            .collect();
        // (`sitofp(len << 8)`'s values, from the table: one conversion
        // fewer on the way from the level to the scaled coordinates)
        let scaled = [LevelCol::WidthX256, LevelCol::HeightX256].map(|c| {
            let v = self.level_col(dv, idx, c);
            self.ins(&format!("bitcast {vit} {v} to {vt}"))
        });
        self.lv(&w, &h, (&s, stride_q), &base, Some(scaled))
    }

    /// Whether every lane's table index `idx` is in the table and its
    /// level fits the kernel (`QuadSampler::entry`): an `i1`.
    fn level_fits(&mut self, dv: &DescVals, idx: &str) -> String {
        let mt = self.m1();
        let inside = self.icmp_i("ult", idx, &self.isp(TABLE_LEVELS as i32));
        let f = self.level_col(dv, idx, LevelCol::Fits);
        let set = self.icmp_i("ne", &f, "zeroinitializer");
        let ok = self.ins(&format!("and {mt} {inside}, {set}"));
        self.all_lanes(&ok)
    }

    /// `avx2_lanes::rho2_quads`: each quad's `rho^2` in its four lanes.
    fn rho2(&mut self, dv: &DescVals, cx: &str, cy: &str) -> String {
        let vt = self.v();
        let perm = |e: &mut E, v: &str, sel: [u32; 8]| {
            let sel = e.per_group(sel);
            e.ins(&format!("shufflevector {vt} {v}, {vt} undef, {sel}"))
        };
        let d = |e: &mut E, c: &str, size: &str| {
            let a = perm(e, c, [1, 2, 1, 2, 5, 6, 5, 6]);
            let z = perm(e, c, [0, 0, 0, 0, 4, 4, 4, 4]);
            let s = e.ins(&format!("fsub {vt} {a}, {z}"));
            e.ins(&format!("fmul {vt} {s}, {size}"))
        };
        let ds = d(self, cx, &dv.size_x);
        let dt = d(self, cy, &dv.size_y);
        let ss = self.ins(&format!("fmul {vt} {ds}, {ds}"));
        let tt = self.ins(&format!("fmul {vt} {dt}, {dt}"));
        let sum = self.ins(&format!("fadd {vt} {ss}, {tt}"));
        let swapped = perm(self, &sum, [1, 0, 3, 2, 5, 4, 7, 6]);
        // `maxps(sum, swapped)`: `sum > swapped ? sum : swapped`; `sum`
        // where `swapped` is NaN
        let mx = self.sel_cmp("ogt", &sum, &swapped, &sum, &swapped);
        let m = self.sel_cmp("uno", &swapped, &swapped, &sum, &mx);
        perm(self, &m, [0, 0, 0, 0, 4, 4, 4, 4])
    }

    /// `ilog2_levels`' level: `first + ((exponent(rho2) + 1) >> 1)`
    /// clamped to `first..=last`.
    fn ilog2_level(&mut self, dv: &DescVals, rho2: &str) -> String {
        let bits = self.i(rho2);
        let e = self.iop("ashr", &bits, &self.isp(23));
        let e = self.iop("and", &e, &self.isp(0xff));
        let e = self.iop("sub", &e, &self.isp(127));
        let e = self.iop("add", &e, &self.isp(1));
        let ip = self.iop("ashr", &e, &self.isp(1));
        let l = self.iop("add", &dv.first, &ip);
        let l = self.imin_max("smax", &l, &dv.first);
        self.imin_max("smin", &l, &dv.last)
    }

    /// `avx2_lanes::linear_lods`: `(every lane's LOD is a number, level
    /// 0, level 1, 8-bit weight)`.
    fn linear_lods(&mut self, dv: &DescVals, rho2: &str) -> [String; 4] {
        let (vt, vit, mt) = (self.v(), self.vi(), self.m1());
        let bits = self.i(rho2);
        let e = self.iop("ashr", &bits, &self.isp(23));
        let e = self.iop("and", &e, &self.isp(0xff));
        let e = self.iop("sub", &e, &self.isp(127));
        let m = self.iop("and", &bits, &self.isp(0x007f_ffff));
        let m = self.iop("or", &m, &self.isp(127 << 23));
        let m = self.f(&m);
        let one = self.fsplat(1.0);
        let ef = self.ins(&format!("sitofp {vit} {e} to {vt}"));
        let m1 = self.ins(&format!("fsub {vt} {m}, {one}"));
        let sum = self.ins(&format!("fadd {vt} {ef}, {m1}"));
        let lod = self.ins(&format!("fmul {vt} {}, {sum}", self.fsplat(0.5)));
        let ord = self.ins(&format!("fcmp oeq {vt} {lod}, {lod}"));
        let number = self.all_lanes(&ord);
        let ip = self.round(&lod, 9);
        let fpart = self.ins(&format!("fsub {vt} {lod}, {ip}"));
        let ipi = self.cvt_ps2dq(&ip, false);
        let l0 = self.iop("add", &dv.first, &ipi);
        let below = self.icmp_i("sgt", &dv.first, &l0);
        let above = self.icmp_i("sle", &dv.last, &l0);
        let single = self.ins(&format!("or {mt} {below}, {above}"));
        let t = self.ins(&format!(
            "select {mt} {above}, {vit} {}, {vit} {l0}",
            dv.last
        ));
        let level0 = self.ins(&format!(
            "select {mt} {below}, {vit} {}, {vit} {t}",
            dv.first
        ));
        let next = self.iop("add", &l0, &self.isp(1));
        let level1 = self.ins(&format!(
            "select {mt} {single}, {vit} {level0}, {vit} {next}"
        ));
        // `minps(maxps(fpart, 0), 1)`, `cvttps2dq(x * 256)` clamped to a byte
        let z = self.fsplat(0.0);
        let c = self.sel_cmp("ogt", &fpart, &z, &fpart, &z);
        let c = self.sel_cmp("olt", &c, &one, &c, &one);
        let s = self.ins(&format!("fmul {vt} {c}, {}", self.fsplat(256.0)));
        let w = self.cvt_ps2dq(&s, true);
        let w = self.imin_max("smax", &w, "zeroinitializer");
        let w = self.imin_max("smin", &w, &self.isp(255));
        let w = self.ins(&format!(
            "select {mt} {single}, {vit} zeroinitializer, {vit} {w}"
        ));
        [number, level0, level1, w]
    }

    /// A shuffle mask (`<n x i32>`) applying the 8-lane selection `sel`
    /// to each group of the region's vectors (lanes `8 * h + sel[k]`).
    fn per_group(&self, sel: [u32; 8]) -> String {
        let all: Vec<String> = (0..self.lanes() as u32 / 8)
            .flat_map(|h| sel.map(|k| format!("i32 {}", 8 * h + k)))
            .collect();
        format!("<{} x i32> <{}>", all.len(), all.join(", "))
    }

    /// An `i32` constant vector of the region's width, `v[k]` in lane
    /// `k` of each group.
    fn per_group_i(&self, v: [i32; 8]) -> String {
        let all: Vec<String> = (0..self.lanes() / 8)
            .flat_map(|_| v.map(|k| format!("i32 {k}")))
            .collect();
        format!("<{}>", all.join(", "))
    }

    /// A value carried from one group to the next ([`E::carry`]): the
    /// header phi's name, of type `ty`, `init` before the first group;
    /// [`Self::carry_next`] gives its value at the latch.
    fn carried(&mut self, ty: &str, init: &str) -> String {
        self.n += 1;
        let name = format!("%c{}", self.n);
        self.carry.push((
            name.clone(),
            ty.to_string(),
            init.to_string(),
            String::new(),
        ));
        name
    }

    fn carry_next(&mut self, name: &str, next: String) {
        if let Some(c) = self.carry.iter_mut().find(|c| c.0 == name) {
            c.3 = next;
        }
    }

    /// A fresh label.
    fn label(&mut self, what: &str) -> String {
        self.n += 1;
        format!("tx{}{what}", self.n)
    }

    fn open(&mut self, label: &str) {
        let _ = writeln!(self.out, "{label}:");
    }

    /// `x` (an `i32`) in every lane.
    fn splat_i(&mut self, x: &str) -> String {
        let (vit, n) = (self.vi(), self.lanes());
        let v = self.ins(&format!("insertelement {vit} undef, i32 {x}, i32 0"));
        self.ins(&format!(
            "shufflevector {vit} {v}, {vit} undef, <{n} x i32> zeroinitializer"
        ))
    }

    /// `x` (a `float`) in every lane.
    fn splat_f(&mut self, x: &str) -> String {
        let (vt, n) = (self.v(), self.lanes());
        let v = self.ins(&format!("insertelement {vt} undef, float {x}, i32 0"));
        self.ins(&format!(
            "shufflevector {vt} {v}, {vt} undef, <{n} x i32> zeroinitializer"
        ))
    }

    /// `TexDesc` field at byte `off` of descriptor `d`, of type `ty`: a
    /// load the group loop's invariants are hoisted with.
    fn desc_field(&mut self, d: &str, off: usize, ty: &str) -> String {
        let b = self.ptr("i8");
        let p = self.ins(&format!("getelementptr i8, {b} {d}, i64 {off}"));
        let q = self.cast(&p, ty);
        let tp = self.ptr(ty);
        self.ins(&format!("load {ty}, {tp} {q}, !invariant.load !0"))
    }

    /// `a op b` on the region's `i32` vectors.
    fn iop(&mut self, op: &str, a: &str, b: &str) -> String {
        let vit = self.vi();
        self.ins(&format!("{op} {vit} {a}, {b}"))
    }

    fn icmp_i(&mut self, cc: &str, a: &str, b: &str) -> String {
        let vit = self.vi();
        self.ins(&format!("icmp {cc} {vit} {a}, {b}"))
    }

    /// Whether every lane of the lane mask `m` is set.
    fn all_lanes(&mut self, m: &str) -> String {
        let (mt, bt) = (self.m1(), self.mask_int());
        let bits = self.ins(&format!("bitcast {mt} {m} to {bt}"));
        self.ins(&format!("icmp eq {bt} {bits}, -1"))
    }

    /// Whether any lane of the lane mask `m` is set.
    fn any_lane(&mut self, m: &str) -> String {
        let (mt, bt) = (self.m1(), self.mask_int());
        let bits = self.ins(&format!("bitcast {mt} {m} to {bt}"));
        self.ins(&format!("icmp ne {bt} {bits}, 0"))
    }

    /// The integer of a lane mask's bits (`i8`, `i16`).
    fn mask_int(&self) -> &'static str {
        if self.w16 { "i16" } else { "i8" }
    }

    fn imin_max(&mut self, f: &str, a: &str, b: &str) -> String {
        let vit = self.vi();
        let is = self.is();
        self.ins(&format!("call {vit} @llvm.{f}.{is}({vit} {a}, {vit} {b})"))
    }

    /// `avx2_lanes::scaled`: `(scaled coordinate, texel left of the
    /// point, 8-bit weight)` of coordinate `c` on an axis of `len` texels,
    /// where `f` is `sitofp(len << 8)`.  The integers are the kernel's
    /// where [`Self::in_range`] holds; elsewhere `cvtps2dq` gives
    /// 0x8000_0000 and the texel index 0x7f_ffff, past any level's last
    /// texel (the kernels read levels of at most 2^16 texels a side,
    /// `texture::MAX_KERNEL_LEVEL`), which the interior test in
    /// [`Self::bilinear`] relies on.
    fn scaled(&mut self, c: &str, f: &str) -> (String, String, String) {
        let vt = self.v();
        let s = self.ins(&format!("fmul {vt} {c}, {f}"));
        let u = self.cvt_ps2dq(&s, false);
        let u = self.iop("sub", &u, &self.isp(128));
        let i = self.iop("ashr", &u, &self.isp(8));
        let w = self.iop("and", &u, &self.isp(255));
        (s, i, w)
    }

    /// Both axes of a lookup at (`cx`, `cy`) on `lv`.
    fn scaled2(&mut self, lv: &Lv, cx: &str, cy: &str) -> Scaled {
        let (sy, iy, wy) = self.scaled(cy, &lv.height_f);
        let (sx, i0, wx) = self.scaled(cx, &lv.width_f);
        Scaled {
            sx,
            sy,
            iy,
            wy,
            i0,
            wx,
        }
    }

    /// `avx2_lanes::scaled`'s range test on both axes: the lanes whose
    /// scaled coordinates convert to `i32` (a lane mask).
    fn in_range(&mut self, sc: &Scaled) -> String {
        let (vt, mt) = (self.v(), self.m1());
        let limit = self.fsplat(2147483520.0);
        let [okx, oky] = [&sc.sx, &sc.sy].map(|s| {
            let a = self.call1(&self.nm("llvm.fabs", "f32"), vt, &[s]);
            self.ins(&format!("fcmp olt {vt} {a}, {limit}"))
        });
        self.ins(&format!("and {mt} {oky}, {okx}"))
    }

    /// `repeat_pair` (`repeat`) or `clamp_pair`: the two texel columns
    /// (rows) of each lane's footprint.
    fn wrap_pair(&mut self, repeat: bool, i: &str, last: &str) -> (String, String) {
        let (vit, mt) = (self.vi(), self.m1());
        let one = self.isp(1);
        if repeat {
            let i0 = self.iop("and", i, last);
            let n = self.iop("add", &i0, &one);
            let i1 = self.iop("and", &n, last);
            return (i0, i1);
        }
        let ge0 = self.icmp_i("sgt", i, &self.isp(-1));
        let lt = self.icmp_i("sgt", last, i);
        let inside = self.ins(&format!("and {mt} {ge0}, {lt}"));
        let m = self.imin_max("smax", i, "zeroinitializer");
        let c0 = self.imin_max("smin", &m, last);
        let n = self.iop("add", &c0, &one);
        let c1 = self.ins(&format!("select {mt} {inside}, {vit} {n}, {vit} {c0}"));
        (c0, c1)
    }

    /// `fetch_pairs_by` for one row: the 8-byte pair at texel index `i`
    /// (clamped to `max`; `None`: an interior group's index, which needs
    /// no clamp, [`Self::bilinear`]) of each lane as (left, right)
    /// texels; by two 4-element `vpgatherdq` a group where gathers are
    /// fast, else by 8 scalar loads.  With `next_row` ([`Lv::stride_q`],
    /// scalar loads only) the pairs are those one row below index `i`'s:
    /// the same extracted indices from a pointer a row further on.
    fn pair_row(
        &mut self,
        words: &str,
        i: &str,
        max: Option<&str>,
        gather: bool,
        next_row: Option<&[String]>,
    ) -> (String, String) {
        let vit = self.vi();
        let b = self.ptr("i8");
        // The base pointer of each quad.
        let bases: Vec<String> = match next_row {
            Some(q) => q
                .iter()
                .map(|s| {
                    let off = self.texel_offset(s);
                    self.ins(&format!("getelementptr i8, {b} {words}, i64 {off}"))
                })
                .collect(),
            None => vec![words.to_string(); self.lanes() / 4],
        };
        let i = match max {
            Some(max) => self.imin_max("umin", i, max),
            None => i.to_string(),
        };
        let mut left = Vec::new();
        let mut right = Vec::new();
        for h in 0..self.lanes() as u32 / 8 {
            // The pairs of lanes 0, 1, 4, 5 of the group in `lo` and of
            // 2, 3, 6, 7 in `hi`: then one in-lane shuffle (`vshufps`) per
            // texel restores the lane order, as `fetch_pairs_by` does.
            let lanes = [[0, 1, 4, 5], [2, 3, 6, 7]].map(|q| q.map(|l| 8 * h + l));
            let [lo, hi] = lanes.map(|lanes| {
                if gather {
                    let sel = lanes.map(|l| format!("i32 {l}")).join(", ");
                    let ix = self.ins(&format!(
                        "shufflevector {vit} {i}, {vit} undef, <4 x i32> <{sel}>"
                    ));
                    self.ins(&format!(
                        "call <4 x i64> @llvm.x86.avx2.gather.d.q.256(<4 x i64> zeroinitializer, \
                         {b} {words}, <4 x i32> {ix}, <4 x i64> <i64 -1, i64 -1, i64 -1, i64 -1>, \
                         i8 4)"
                    ))
                } else {
                    let mut v = "undef".to_string();
                    for (k, l) in lanes.into_iter().enumerate() {
                        let e = self.ins(&format!("extractelement {vit} {i}, i32 {l}"));
                        let off = self.texel_offset(&e);
                        let base = &bases[l as usize / 4];
                        let p = self.ins(&format!("getelementptr i8, {b} {base}, i64 {off}"));
                        let q = self.cast(&p, "i64");
                        let qp = self.ptr("i64");
                        let x = self.ins(&format!("load i64, {qp} {q}, align 1"));
                        v = self.ins(&format!("insertelement <4 x i64> {v}, i64 {x}, i32 {k}"));
                    }
                    v
                }
            });
            let lo = self.ins(&format!("bitcast <4 x i64> {lo} to {VI}"));
            let hi = self.ins(&format!("bitcast <4 x i64> {hi} to {VI}"));
            let pick = |e: &mut E, sel: &str| {
                e.ins(&format!(
                    "shufflevector {VI} {lo}, {VI} {hi}, <8 x i32> <{sel}>"
                ))
            };
            left.push(pick(
                self,
                "i32 0, i32 2, i32 8, i32 10, i32 4, i32 6, i32 12, i32 14",
            ));
            right.push(pick(
                self,
                "i32 1, i32 3, i32 9, i32 11, i32 5, i32 7, i32 13, i32 15",
            ));
        }
        (self.join_groups(&left), self.join_groups(&right))
    }

    /// The region's `<n x i32>` vector of the 8-lane `parts`, one a group.
    fn join_groups(&mut self, parts: &[String]) -> String {
        self.join_groups_of(parts, "i32")
    }

    /// The 8-lane groups of the region's `<n x i32>` vector `v`.
    fn split_groups(&mut self, v: &str) -> Vec<String> {
        self.split_groups_of(v, "i32")
    }

    /// Whether an interior group's texel indices `a` run on along each
    /// pixel row (lanes 0, 1, 4, 5 and 2, 3, 6, 7: `a[0] + 0..4` and
    /// `a[2] + 0..4`, in each group) and every quad's rows have one
    /// stride (`stride_q`): then [`Self::run_pairs`] applies.  A
    /// full-screen pass sampling its source near one texel per pixel
    /// (postprocess) passes on most of its lookups.
    fn consecutive(&mut self, a: &str, stride_q: &[String]) -> String {
        let vit = self.vi();
        let sel = self.per_group([0, 0, 2, 2, 0, 0, 2, 2]);
        let first = self.ins(&format!("shufflevector {vit} {a}, {vit} undef, {sel}"));
        let step = self.per_group_i([0, 1, 0, 1, 2, 3, 2, 3]);
        let want = self.ins(&format!("add {vit} {first}, {step}"));
        let eq = self.icmp_i("eq", a, &want);
        let mut all = self.all_lanes(&eq);
        // (One value for every quad, `desc_vals`' single level: nothing
        // to compare at run time.)
        for q in &stride_q[1..] {
            if *q != stride_q[0] {
                let same = self.ins(&format!("icmp eq i32 {}, {q}", stride_q[0]));
                all = self.ins(&format!("and i1 {all}, {same}"));
            }
        }
        all
    }

    /// [`Self::pair_row`]'s four texel vectors (top left, top right,
    /// bottom left, bottom right) for indices `a` that pass
    /// [`Self::consecutive`]: each pixel row's left texels are the four
    /// from its first index on and its right texels the four after that
    /// one, so eight 16-byte loads and four shuffles replace 16 scalar
    /// loads and their index extractions.  In bounds: every texel read
    /// is one of the interior lanes' 2x2 footprints.
    fn run_pairs(&mut self, words: &str, a: &str, stride: &str) -> [String; 4] {
        let vit = self.vi();
        let b = self.ptr("i8");
        let row = self.texel_offset(stride);
        let below = self.ins(&format!("getelementptr i8, {b} {words}, i64 {row}"));
        let runs: Vec<String> = (0..self.lanes() as u32 / 8)
            .flat_map(|h| [8 * h, 8 * h + 2])
            .map(|l| {
                let e = self.ins(&format!("extractelement {vit} {a}, i32 {l}"));
                self.texel_offset(&e)
            })
            .collect();
        let load4 = |e: &mut E, base: &str, off: &str, plus: i64| {
            let p = e.ins(&format!("getelementptr i8, {b} {base}, i64 {off}"));
            let p = e.ins(&format!("getelementptr i8, {b} {p}, i64 {plus}"));
            let vp = e.ptr("<4 x i32>");
            let q = e.cast(&p, "<4 x i32>");
            e.ins(&format!("load <4 x i32>, {vp} {q}, align 4"))
        };
        let [[tl, tr], [bl, br]] = [words.to_string(), below].map(|base| {
            [0, 4].map(|plus| {
                let groups: Vec<String> = runs
                    .chunks(2)
                    .map(|quads| {
                        let x = load4(self, &base, &quads[0], plus);
                        let y = load4(self, &base, &quads[1], plus);
                        self.ins(&format!(
                            "shufflevector <4 x i32> {x}, <4 x i32> {y}, \
                             <8 x i32> <i32 0, i32 1, i32 4, i32 5, i32 2, i32 3, i32 6, i32 7>"
                        ))
                    })
                    .collect();
                self.join_groups(&groups)
            })
        });
        [tl, tr, bl, br]
    }

    /// The byte offset (`i64`) of texel index `i` (an `i32`, 4-byte
    /// texels) from a level's `words`.
    fn texel_offset(&mut self, i: &str) -> String {
        let z = self.ins(&format!("zext i32 {i} to i64"));
        self.ins(&format!("shl i64 {z}, 2"))
    }

    /// `gather_clamped`: the texel at index `min(row + x, max)` of each
    /// lane (one `vpgatherdd` a group).
    fn gather_word(&mut self, words: &str, row: &str, x: &str, max: &str) -> String {
        let b = self.ptr("i8");
        let i = self.iop("add", row, x);
        let i = self.imin_max("umin", &i, max);
        let ones = E::isplat(-1);
        let parts: Vec<String> = self
            .split_groups(&i)
            .iter()
            .map(|i| {
                self.ins(&format!(
                    "call {VI} @llvm.x86.avx2.gather.d.d.256({VI} zeroinitializer, {b} {words}, \
                     {VI} {i}, {VI} {ones}, i8 4)"
                ))
            })
            .collect();
        self.join_groups(&parts)
    }

    /// `both16_avx2`: an 8-bit weight per lane in both 16-bit halves,
    /// times 128.
    fn both16(&mut self, w: &str) -> String {
        let (vit, wt) = (self.vi(), self.vw());
        let h = self.iop("shl", w, &self.isp(16));
        let o = self.iop("or", w, &h);
        let o = self.iop("shl", &o, &self.isp(7));
        self.ins(&format!("bitcast {vit} {o} to {wt}"))
    }

    /// `lerp16`: `a + mulhrs(b - a, w)` on 16-bit lanes.
    fn lerp16(&mut self, a: &str, b: &str, w: &str) -> String {
        let wt = self.vw();
        let mulhrs = if self.w16 {
            "llvm.x86.avx512.pmul.hr.sw.512"
        } else {
            "llvm.x86.avx2.pmul.hr.sw"
        };
        let d = self.ins(&format!("sub {wt} {b}, {a}"));
        let m = self.ins(&format!("call {wt} @{mulhrs}({wt} {d}, {wt} {w})"));
        self.ins(&format!("add {wt} {a}, {m}"))
    }

    /// `filter_pairs_avx2`: the four texels of each lane's footprint
    /// filtered, as the two 16-bit channel pairs `(even, odd)` (`<16 x
    /// i16>` values).
    fn filter_pairs(&mut self, t: [&str; 4], wx: &str, wy: &str) -> (String, String) {
        let (vit, wt) = (self.vi(), self.vw());
        let (wx, wy) = (self.both16(wx), self.both16(wy));
        let pairs = self.isp(0x00ff_00ff);
        let eight = self.isp(8);
        let half = |e: &mut E, shift: bool| {
            let mut s = Vec::with_capacity(4);
            for x in t {
                let x = if shift {
                    e.iop("ashr", x, &eight)
                } else {
                    x.to_string()
                };
                let m = e.iop("and", &x, &pairs);
                s.push(e.ins(&format!("bitcast {vit} {m} to {wt}")));
            }
            let top = e.lerp16(&s[0], &s[1], &wx);
            let bottom = e.lerp16(&s[2], &s[3], &wx);
            e.lerp16(&top, &bottom, &wy)
        };
        let even = half(self, false);
        let odd = half(self, true);
        (even, odd)
    }

    /// `channels_f32`: the filtered channel pairs as floats, `v / 255`
    /// per stored byte.
    fn channels(&mut self, even: &str, odd: &str) -> [String; 4] {
        let (vt, vit, wt) = (self.v(), self.vi(), self.vw());
        let even = self.ins(&format!("bitcast {wt} {even} to {vit}"));
        let odd = self.ins(&format!("bitcast {wt} {odd} to {vit}"));
        let lo = self.isp(0xffff);
        let scale = self.fsplat(1.0 / 255.0);
        let a = self.iop("and", &even, &lo);
        let b = self.iop("and", &odd, &lo);
        let c = self.iop("ashr", &even, &self.isp(16));
        let d = self.iop("ashr", &odd, &self.isp(16));
        [a, b, c, d].map(|x| {
            let f = self.ins(&format!("sitofp {vit} {x} to {vt}"));
            self.ins(&format!("fmul {vt} {f}, {scale}"))
        })
    }

    /// `bilinear_taps_avx2` on level layout `lv` at the scaled
    /// coordinates `sc` (whose `ok` the caller has branched on), then
    /// `bilinear_fetch_avx2` from each of `dvs`' texels (`bilinear_n`):
    /// the filtered channel pairs of each, and the block they are defined
    /// in (the current block after the call).
    ///
    /// `guard`: the label of the fallback, where the caller has not
    /// branched on [`Self::in_range`]: then the interior test comes first
    /// (it fails where the range test does, [`Self::scaled`]) and only
    /// the other groups pay for the range test.
    fn bilinear(
        &mut self,
        spec: InlineSample,
        dvs: &[DescVals],
        lv: &Lv,
        sc: &Scaled,
        guard: Option<&str>,
    ) -> (Vec<(String, String)>, String) {
        let (vit, mt) = (self.vi(), self.m1());
        // Interior groups first: where every lane's 2x2 footprint lies
        // inside the level without wrapping (x0 + 1 <= last_x, y0 + 1 <=
        // last_y), both wraps give x1 = x0 + 1, y1 = y0 + 1, and no edge
        // weight is zeroed, so the clamps, the edge selects and the second
        // row's multiply drop out: the general path's bits, ~22 fewer
        // instructions for a CLAMP_TO_EDGE lookup against ~10 for the test
        // (postprocess, whose groups are all interior but for a 1-texel
        // border: 0.904x its time).  With REPEAT on both axes the general
        // path is as short, and the test cost pbr_barrels 1.019x: none.
        let axis = |e: &mut E, repeat: bool, i: &str, last: &str| {
            let v = if repeat {
                e.iop("and", i, last)
            } else {
                i.to_string()
            };
            let inside = e.icmp_i("ult", &v, last);
            (v, inside)
        };
        let gather = gathers();
        let (pair, quad, filt) = (self.label("p"), self.label("q"), self.label("w"));
        let mut from_inner = None;
        let check = |e: &mut E| {
            if let Some(slow) = guard {
                let ok = e.in_range(sc);
                let ok = e.all_lanes(&ok);
                let edges = e.label("r");
                e.line(&format!(
                    "br i1 {ok}, label %{edges}, label %{slow}, !prof !1"
                ));
                e.open(&edges);
            }
        };
        let vx = if spec.repeat_s && spec.repeat_t {
            check(self);
            self.iop("and", &sc.i0, &lv.last_x)
        } else {
            let (vx, in_x) = axis(self, spec.repeat_s, &sc.i0, &lv.last_x);
            let (vy, in_y) = axis(self, spec.repeat_t, &sc.iy, &lv.last_y);
            let inside = self.ins(&format!("and {mt} {in_x}, {in_y}"));
            let interior = self.all_lanes(&inside);
            let (inner, edges) = (self.label("i"), self.label("g"));
            self.line(&format!("br i1 {interior}, label %{inner}, label %{edges}"));

            self.open(&inner);
            let m0 = self.iop("mul", &vy, &lv.stride);
            let r0 = self.iop("add", &lv.base, &m0);
            let a = self.iop("add", &r0, &vx);
            let run = (!gather).then(|| {
                let ok = self.consecutive(&a, &lv.stride_q);
                let (fast, scalar) = (self.label("c"), self.label("n"));
                self.line(&format!("br i1 {ok}, label %{fast}, label %{scalar}"));
                self.open(&fast);
                let t: Vec<[String; 4]> = dvs
                    .iter()
                    .map(|dv| self.run_pairs(&dv.words, &a, &lv.stride_q[0]))
                    .collect();
                let join = self.label("k");
                self.line(&format!("br label %{join}"));
                self.open(&scalar);
                (fast, scalar, join, t)
            });
            let texels: Vec<[String; 4]> = dvs
                .iter()
                .map(|dv| {
                    // (no clamp: both pairs lie inside the level, x0 + 1
                    // <= last_x and y0 + 1 <= last_y, and every texel of
                    // a level the table holds is inside `words`,
                    // `QuadSampler::fill`: postprocess 2 `vpminud` and a
                    // reload fewer a lookup)
                    let (tl, tr) = self.pair_row(&dv.words, &a, None, gather, None);
                    // (The second row is `a` plus the row stride: with
                    // scalar loads it reuses `a`'s extracted indices,
                    // postprocess 8 index extractions fewer a lookup.)
                    let (bl, br) = if gather {
                        let c = self.iop("add", &a, &lv.stride);
                        self.pair_row(&dv.words, &c, None, gather, None)
                    } else {
                        self.pair_row(&dv.words, &a, None, gather, Some(&lv.stride_q))
                    };
                    [tl, tr, bl, br]
                })
                .collect();
            let (inner, texels) = match run {
                Some((fast, scalar, join, t)) => {
                    self.line(&format!("br label %{join}"));
                    self.open(&join);
                    let texels = t
                        .iter()
                        .zip(&texels)
                        .map(|(f, n)| {
                            [0, 1, 2, 3].map(|k| {
                                self.ins(&format!(
                                    "phi {vit} [{}, %{fast}], [{}, %{scalar}]",
                                    f[k], n[k]
                                ))
                            })
                        })
                        .collect();
                    (join, texels)
                }
                None => (inner, texels),
            };
            self.line(&format!("br label %{filt}"));
            from_inner = Some((inner, texels));
            self.open(&edges);
            check(self);
            vx
        };
        let (y0, y1) = self.wrap_pair(spec.repeat_t, &sc.iy, &lv.last_y);
        let m0 = self.iop("mul", &y0, &lv.stride);
        let r0 = self.iop("add", &lv.base, &m0);
        let m1 = self.iop("mul", &y1, &lv.stride);
        let r1 = self.iop("add", &lv.base, &m1);
        let last = &lv.last_x;
        let i0 = &sc.i0;
        // the pair fetch's (left texel, weight, lanes whose left texel is
        // the right one) and whether every lane may take it
        let (pairs_ok, p, w, right) = if spec.repeat_s {
            let lt = self.icmp_i("sgt", last, &vx);
            let all = self.all_lanes(&lt);
            (all, vx.clone(), sc.wx.clone(), None)
        } else {
            let m = self.imin_max("smax", i0, "zeroinitializer");
            let p = self.imin_max("smin", &m, &lv.last_x_m1);
            let right = self.icmp_i("sle", last, i0);
            let neg = self.icmp_i("slt", i0, "zeroinitializer");
            let edge = self.ins(&format!("or {mt} {neg}, {right}"));
            let w = self.ins(&format!(
                "select {mt} {edge}, {vit} zeroinitializer, {vit} {}",
                sc.wx
            ));
            (lv.wide.clone(), p, w, Some(right))
        };
        self.line(&format!("br i1 {pairs_ok}, label %{pair}, label %{quad}"));

        self.open(&pair);
        let a = self.iop("add", &r0, &p);
        let c = self.iop("add", &r1, &p);
        let from_pair: Vec<[String; 4]> = dvs
            .iter()
            .map(|dv| {
                let (mut tl, tr) = self.pair_row(&dv.words, &a, Some(&dv.max_pair), gather, None);
                let (mut bl, br) = self.pair_row(&dv.words, &c, Some(&dv.max_pair), gather, None);
                if let Some(right) = &right {
                    tl = self.ins(&format!("select {mt} {right}, {vit} {tr}, {vit} {tl}"));
                    bl = self.ins(&format!("select {mt} {right}, {vit} {br}, {vit} {bl}"));
                }
                [tl, tr, bl, br]
            })
            .collect();
        self.line(&format!("br label %{filt}"));

        self.open(&quad);
        let (x0, x1) = self.wrap_pair(spec.repeat_s, i0, last);
        let from_quad: Vec<[String; 4]> = dvs
            .iter()
            .map(|dv| {
                [(&r0, &x0), (&r0, &x1), (&r1, &x0), (&r1, &x1)]
                    .map(|(r, x)| self.gather_word(&dv.words, r, x, &dv.max_word))
            })
            .collect();
        self.line(&format!("br label %{filt}"));

        self.open(&filt);
        // (every phi first: LLVM requires them at the top of the block)
        let inner = from_inner.as_ref().map(|(l, _)| l.as_str());
        let phi = |e: &mut E, i: Option<&String>, p: &str, q: &str| {
            let head = match (inner, i) {
                (Some(l), Some(v)) => format!("[{v}, %{l}], "),
                _ => String::new(),
            };
            e.ins(&format!("phi {vit} {head}[{p}, %{pair}], [{q}, %{quad}]"))
        };
        let wxf = phi(self, Some(&sc.wx), &w, &sc.wx);
        let texels: Vec<Vec<String>> = (0..dvs.len())
            .map(|d| {
                (0..4)
                    .map(|k| {
                        let i = from_inner.as_ref().map(|(_, t)| &t[d][k]);
                        phi(self, i, &from_pair[d][k], &from_quad[d][k])
                    })
                    .collect()
            })
            .collect();
        let out = texels
            .iter()
            .map(|tx| self.filter_pairs([&tx[0], &tx[1], &tx[2], &tx[3]], &wxf, &sc.wy))
            .collect();
        (out, filt)
    }

    /// The lookups of `group` (adjacent ops at the same coordinates whose
    /// addressing is the first's, [`shares`]; usually one), inlined:
    /// `QuadSampler::group` (`group_n` for several) for kernel `spec`,
    /// each on its own descriptor, and their fallback for the groups the
    /// kernel leaves.
    pub(super) fn sample_inline(&mut self, group: &[(&TexOp, InlineHow)]) {
        let (mt, wt) = (self.m1(), self.vw());
        let (t, h) = group[0];
        let spec = h.spec;
        let (cx, cy) = (self.get(t.coord[0]), self.get(t.coord[1]));
        let dvs: Vec<DescVals> = group
            .iter()
            .map(|(_, h)| self.desc[&h.slot].clone())
            .collect();
        let dv = &dvs[0];
        let (fast, slow, join) = (self.label("f"), self.label("s"), self.label("j"));
        // carried values: (header phi, type, this group's value on the
        // fast path)
        let mut carry: Vec<(String, String, String)> = Vec::new();
        // the level of each quad (and for LINEAR the second one and the
        // weight); a quad choosing a level the kernel cannot read sends
        // the group to the fallback
        let (lv0, second) = match spec.lod {
            InlineLod::Const => (dv.level.clone(), None),
            InlineLod::Ilog2 | InlineLod::Linear => {
                let rho2 = self.rho2(dv, &cx, &cy);
                let (ok, levels) = if spec.lod == InlineLod::Ilog2 {
                    let l = self.ilog2_level(dv, &rho2);
                    (None, [l.clone(), l])
                } else {
                    let [number, l0, l1, w] = self.linear_lods(dv, &rho2);
                    (Some((number, w)), [l0, l1])
                };
                let idx0 = self.table_index(dv, &levels[0]);
                let mut fit = self.level_fits(dv, &idx0);
                let mut idxs = vec![idx0.clone()];
                let mut second = None;
                if let Some((number, w)) = ok {
                    let idx1 = self.table_index(dv, &levels[1]);
                    let f = self.level_fits(dv, &idx1);
                    fit = self.ins(&format!("and i1 {fit}, {f}"));
                    fit = self.ins(&format!("and i1 {fit}, {number}"));
                    let ne = self.icmp_i("ne", &idx1, &idx0);
                    let differ = self.any_lane(&ne);
                    idxs.push(idx1);
                    second = Some((w, differ));
                }
                // The previous group's levels and layouts, carried: where
                // this group's levels are the same (most groups of a
                // primitive), its layouts are the carried ones, and the
                // level's chain (rho, level, table) feeds only the
                // comparison's branch, not the texel addresses.  Computing
                // the layout per group cost textured_mesh ~10 % of its time
                // (docs/performance.md, "Where the time goes", 2026-12-07
                // fifth session).  i32::MIN is no table index.
                let vit = self.vi();
                let types = Lv::types(self);
                let c_idx: Vec<String> = idxs
                    .iter()
                    .map(|_| self.carried(vit, &self.isp(i32::MIN)))
                    .collect();
                let c_lv: Vec<Vec<String>> = idxs
                    .iter()
                    .map(|_| {
                        types
                            .iter()
                            .map(|ty| {
                                let init = match *ty {
                                    "i32" => "0",
                                    "i1" => "false",
                                    _ => "zeroinitializer",
                                };
                                self.carried(ty, init)
                            })
                            .collect()
                    })
                    .collect();
                let mut same = "true".to_string();
                for (i, c) in idxs.iter().zip(&c_idx) {
                    let eq = self.icmp_i("eq", i, c);
                    let all = self.all_lanes(&eq);
                    same = self.ins(&format!("and i1 {same}, {all}"));
                }
                let (reuse, check, compute, have) = (
                    self.label("u"),
                    self.label("k"),
                    self.label("m"),
                    self.label("h"),
                );
                self.line(&format!("br i1 {same}, label %{reuse}, label %{check}"));
                self.open(&check);
                self.line(&format!(
                    "br i1 {fit}, label %{compute}, label %{slow}, !prof !1"
                ));
                self.open(&compute);
                let fresh: Vec<Vec<String>> =
                    idxs.iter().map(|i| self.lv_of(dv, i).values()).collect();
                self.line(&format!("br label %{have}"));
                self.open(&reuse);
                self.line(&format!("br label %{have}"));
                self.open(&have);
                let lvs: Vec<Lv> = fresh
                    .iter()
                    .zip(&c_lv)
                    .map(|(f, c)| {
                        let v: Vec<String> = (0..types.len())
                            .map(|k| {
                                self.ins(&format!(
                                    "phi {} [{}, %{compute}], [{}, %{reuse}]",
                                    types[k], f[k], c[k]
                                ))
                            })
                            .collect();
                        Lv::from_values(v)
                    })
                    .collect();
                // (after the lookup's join: this group's values where its
                // fast path ran, else the carried ones)
                for ((i, c), (lv, cl)) in idxs.iter().zip(&c_idx).zip(lvs.iter().zip(&c_lv)) {
                    carry.push((c.clone(), vit.to_string(), i.clone()));
                    for ((ty, v), name) in types.iter().zip(lv.values()).zip(cl) {
                        carry.push((name.clone(), ty.to_string(), v));
                    }
                }
                let mut lvs = lvs.into_iter();
                let lv0 = lvs.next().expect("one level at least");
                let second = second.map(|(w, differ)| {
                    let lv1 = lvs.next().expect("LINEAR's second level");
                    (lv1, w, differ)
                });
                (lv0, second)
            }
        };
        let zero = self.fsplat(0.0);
        let one = self.fsplat(1.0);
        let out = |ch: &[String; 4], spec: InlineSample| {
            spec.out.map(|o| match o {
                0..=3 => ch[o as usize].clone(),
                4 => zero.clone(),
                _ => one.clone(),
            })
        };
        if spec.nearest {
            // NEAREST: every lane's index is clamped or wrapped into the
            // level (NaN included), so only a level that does not fit
            // (above) takes the fallback
            self.line(&format!("br label %{fast}"));
            self.open(&fast);
            let ch = self.nearest(spec, &dvs, &lv0, &cx, &cy);
            let fast_out: Vec<[String; 4]> = ch
                .iter()
                .zip(group)
                .map(|(ch, (_, h))| out(ch, h.spec))
                .collect();
            self.line(&format!("br label %{join}"));
            self.fallback_and_join(group, &dvs, (&cx, &cy), &fast_out, [&fast, &slow, &join]);
            self.carry_join(&carry, &fast, &slow);
            return;
        }
        // scaled coordinates; a lane out of range sends the group to the
        // fallback (for LINEAR on both levels: the second's test is the
        // first's where the levels are equal)
        let sc0 = self.scaled2(&lv0, &cx, &cy);
        let guard = if let Some((lv1, _, _)) = &second {
            let sc1 = self.scaled2(lv1, &cx, &cy);
            let ok0 = self.in_range(&sc0);
            let ok1 = self.in_range(&sc1);
            let ok = self.ins(&format!("and {mt} {ok0}, {ok1}"));
            let ok = self.all_lanes(&ok);
            self.line(&format!(
                "br i1 {ok}, label %{fast}, label %{slow}, !prof !1"
            ));
            Some(sc1)
        } else {
            // one level: the range test waits for the groups that are not
            // interior (`bilinear`'s guard)
            self.line(&format!("br label %{fast}"));
            None
        };
        let second = second
            .zip(guard)
            .map(|((lv1, w, differ), sc1)| (lv1, sc1, w, differ));

        self.open(&fast);
        let one_level = second.is_none().then_some(slow.as_str());
        let (mut pairs, mut end) = self.bilinear(spec, &dvs, &lv0, &sc0, one_level);
        if let Some((lv1, sc1, w, differ)) = second {
            // a quad with one level lerps between equal texels (its
            // weight is 0): the second lookup runs where a quad has two
            let (two, both) = (self.label("t"), self.label("b"));
            self.line(&format!("br i1 {differ}, label %{two}, label %{both}"));
            self.open(&two);
            let (p1, _) = self.bilinear(spec, &dvs, &lv1, &sc1, None);
            let w16 = self.both16(&w);
            let lerped: Vec<(String, String)> = pairs
                .iter()
                .zip(&p1)
                .map(|((e0, o0), (e1, o1))| (self.lerp16(e0, e1, &w16), self.lerp16(o0, o1, &w16)))
                .collect();
            let two_end = self.label("e");
            self.line(&format!("br label %{two_end}"));
            self.open(&two_end);
            self.line(&format!("br label %{both}"));
            self.open(&both);
            pairs = pairs
                .iter()
                .zip(&lerped)
                .map(|((e0, o0), (e, o))| {
                    let phi = |x: &mut E, a: &str, b: &str| {
                        x.ins(&format!("phi {wt} [{a}, %{two_end}], [{b}, %{end}]"))
                    };
                    (phi(self, e, e0), phi(self, o, o0))
                })
                .collect();
            end = both;
        }
        let fast_out: Vec<[String; 4]> = pairs
            .iter()
            .zip(group)
            .map(|((even, odd), (_, h))| {
                let ch = self.channels(even, odd);
                out(&ch, h.spec)
            })
            .collect();
        self.line(&format!("br label %{join}"));
        self.fallback_and_join(group, &dvs, (&cx, &cy), &fast_out, [&end, &slow, &join]);
        self.carry_join(&carry, &end, &slow);
    }

    /// `soa::nearest_index` on one axis: the texel index of coordinate
    /// `c` on an axis of `len` texels (`last` = `len - 1`), REPEAT
    /// (`floor`, then the power-of-two mask) or CLAMP_TO_EDGE (truncation
    /// clamped to `0..=last`), with [`Self::trunc_sat`]'s NaN and
    /// saturation.
    fn nearest_index(&mut self, c: &str, len: &str, last: &str, repeat: bool) -> String {
        let (vt, vit) = (self.v(), self.vi());
        let lenf = self.ins(&format!("sitofp {vit} {len} to {vt}"));
        let s = self.ins(&format!("fmul {vt} {c}, {lenf}"));
        if repeat {
            let f = self.round(&s, 9);
            let i = self.trunc_sat(&f);
            // (in 0..=last already: `nearest_index`'s clamps change nothing)
            return self.iop("and", &i, last);
        }
        let i = self.trunc_sat(&s);
        let i = self.imin_max("smax", &i, "zeroinitializer");
        self.imin_max("smin", &i, last)
    }

    /// `wide`'s `f32x8::trunc_int` (Rust's `as i32` per lane) as
    /// [`Self::nearest_index`] uses it: truncation saturating at
    /// `i32::MAX` (the raw `cvttps2dq` gives `i32::MIN` for +infinity
    /// too, which would send it to the first texel instead of the last).
    /// A NaN lane gives `i32::MIN` where `trunc_int` gives 0; both wraps
    /// map the two to texel 0, so the NaN select is left out.
    fn trunc_sat(&mut self, v: &str) -> String {
        let (vt, vit, mt) = (self.v(), self.vi(), self.m1());
        let t = self.cvt_ps2dq(v, true);
        let big = self.fsplat(2147483648.0);
        let ge = self.ins(&format!("fcmp oge {vt} {v}, {big}"));
        let flip = self.ins(&format!("sext {mt} {ge} to {vit}"));
        self.iop("xor", &flip, &t)
    }

    /// `QuadSampler::nearest_channels` at one level per quad (`lv`): each
    /// lane's texel word (`nearest_words`, one `vpgatherdd` per
    /// descriptor of the group) as four bytes times 1/255.
    fn nearest(
        &mut self,
        spec: InlineSample,
        dvs: &[DescVals],
        lv: &Lv,
        cx: &str,
        cy: &str,
    ) -> Vec<[String; 4]> {
        let (vt, vit) = (self.v(), self.vi());
        let x = self.nearest_index(cx, &lv.width, &lv.last_x, spec.repeat_s);
        let y = self.nearest_index(cy, &lv.height, &lv.last_y, spec.repeat_t);
        let m = self.iop("mul", &y, &lv.stride);
        let row = self.iop("add", &lv.base, &m);
        let scale = self.fsplat(1.0 / 255.0);
        dvs.iter()
            .map(|dv| {
                let w = self.gather_word(&dv.words, &row, &x, &dv.max_word);
                [0, 8, 16, 24].map(|sh| {
                    let b = if sh == 0 {
                        w.clone()
                    } else {
                        self.iop("ashr", &w, &self.isp(sh))
                    };
                    let b = self.iop("and", &b, &self.isp(0xff));
                    let f = self.ins(&format!("sitofp {vit} {b} to {vt}"));
                    self.ins(&format!("fmul {vt} {f}, {scale}"))
                })
            })
            .collect()
    }

    /// At a lookup's join (after its result phis): each carried value
    /// for the next group, this group's where its fast path ended in
    /// block `end`, the carried one where it took the fallback `slow`.
    fn carry_join(&mut self, carry: &[(String, String, String)], end: &str, slow: &str) {
        for (name, ty, v) in carry {
            let next = self.ins(&format!("phi {ty} [{v}, %{end}], [{name}, %{slow}]"));
            self.carry_next(name, next);
        }
    }

    /// The fallback block `slow` (the interpreter's lookup per
    /// descriptor at (`cx`, `cy`), through the `preserve_allcc`
    /// trampoline) and the join block's phis of each live result:
    /// `fast_out` from block `end`, the fallback's from `slow`.
    fn fallback_and_join(
        &mut self,
        group: &[(&TexOp, InlineHow)],
        dvs: &[DescVals],
        (cx, cy): (&str, &str),
        fast_out: &[[String; 4]],
        [end, slow, join]: [&str; 3],
    ) {
        let vt = self.v();
        let b = self.ptr("i8");
        self.open(slow);
        let vp = self.ptr(V);
        // (the interpreter's lookup takes one group: a 16-lane region
        // calls it on each half, through the AVX-512 trampoline)
        let trampoline = if self.w16 {
            "@tex_fallback16"
        } else {
            "@tex_fallback"
        };
        let xs = self.split_groups_of(cx, "float");
        let ys = self.split_groups_of(cy, "float");
        let slow_out: Vec<Vec<String>> = dvs
            .iter()
            .map(|dv| {
                let halves: Vec<Vec<String>> = xs
                    .iter()
                    .zip(&ys)
                    .map(|(x, y)| {
                        let b0 = self.buf(0);
                        self.line(&format!("store {V} {x}, {vp} {b0}, align 32"));
                        let b1 = self.buf(1);
                        self.line(&format!("store {V} {y}, {vp} {b1}, align 32"));
                        self.line(&format!(
                            "call preserve_allcc void {trampoline}({b} {}, {vp} {b0}) #1",
                            dv.d
                        ));
                        (0..4)
                            .map(|k| {
                                let p = self.buf(k);
                                self.ins(&format!("load {V}, {vp} {p}, align 32"))
                            })
                            .collect()
                    })
                    .collect();
                (0..4)
                    .map(|k| {
                        let parts: Vec<String> = halves.iter().map(|h| h[k].clone()).collect();
                        self.join_groups_of(&parts, "float")
                    })
                    .collect()
            })
            .collect();
        self.line(&format!("br label %{join}"));

        self.open(join);
        for (((t, _), fo), so) in group.iter().zip(fast_out).zip(&slow_out) {
            let live = t.live & ((1u8 << t.result_count()) - 1);
            for k in 0..4 {
                if live & (1 << k) != 0 {
                    let v = self.ins(&format!(
                        "phi {vt} [{}, %{end}], [{}, %{slow}]",
                        fo[k], so[k]
                    ));
                    self.set(t.dst[k], v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Both forms of the generated pair fetch against the interpreter
    //! (the host picks one; `tests/jit_texture.rs` covers the sampler
    //! states and paths with it).
    use std::cell::Cell;

    use ferropipe_components::enums::{
        ShaderType, TexFilter, TexMipFilter, TexWrap, TextureTarget,
    };
    use ferropipe_components::format::Format;
    use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
    use ferropipe_components::shader::{
        BoundTexture, FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, FragmentShader, Lanes, ShaderResources,
    };
    use ferropipe_components::state::SamplerState;
    use ferropipe_components::view::SamplerViewDesc;
    use wide::f32x8;

    use crate::{Backend, Language, compile_with_backend};

    thread_local! {
        pub(super) static FORCE_GATHERS: Cell<Option<bool>> = const { Cell::new(None) };
    }

    const SRC: &str = "
@group(1) @binding(0) var t: texture_2d<f32>;
@group(2) @binding(0) var s: sampler;
@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    return textureSample(t, s, p.xy) + textureSample(t, s, p.zw).wzyx;
}
";

    fn run(backend: Backend, wrap: TexWrap) -> Vec<u32> {
        let shader = compile_with_backend(
            Language::Wgsl,
            SRC,
            "fs_main",
            ShaderType::Fragment,
            &[],
            &[],
            backend,
        )
        .unwrap();
        let templ = ResourceTemplate {
            target: TextureTarget::Texture2D,
            format: Format::R8G8B8A8_UNORM,
            width0: 8,
            height0: 4,
            depth0: 1,
            array_size: 1,
            ..Default::default()
        };
        let layout = ResourceLayout::new(&templ).unwrap();
        let data: Vec<u8> = (0..layout.size).map(|i| (i * 37 % 251) as u8).collect();
        let view = SamplerViewDesc::of_resource(&templ);
        let smp = SamplerState {
            wrap_s: wrap,
            wrap_t: wrap,
            min_img_filter: TexFilter::Linear,
            mag_img_filter: TexFilter::Linear,
            min_mip_filter: TexMipFilter::None,
            ..SamplerState::default()
        };
        let textures = [Some(BoundTexture {
            view: &view,
            layout: &layout,
            resource_format: templ.format,
            data: &data,
        })];
        let samplers = [Some(&smp)];
        let res = ShaderResources {
            textures: &textures,
            samplers: &samplers,
            ..Default::default()
        };
        // (odd: a 16-lane region's last step has its upper half masked)
        const GROUPS: usize = 49;
        // Groups 0-31 and 48: inside and past the edges, the last column
        // (REPEAT's four gathers), and one NaN (the fallback).  Groups
        // 32-47: one texel a pixel, as a full-screen pass samples, so the
        // interior lookups' indices run on along each pixel row
        // (`run_pairs`), every third group with one lane a texel off
        // (the scalar loads after the check).
        let fc: Vec<Lanes> = (0..4 * GROUPS)
            .map(|r| {
                // (`frag_coord` is `[component][group]`)
                let (g, c) = (r % GROUPS, r / GROUPS);
                f32x8::new(std::array::from_fn(|l| {
                    if (32..48).contains(&g) {
                        let k = g - 32;
                        let (x0, y0) = ((k % 4) as f32, ((k / 4) % 2) as f32);
                        let (lx, ly) = (FRAG_LANE_X[l] as f32, FRAG_LANE_Y[l] as f32);
                        let off = if k % 3 == 2 && l == 5 { -1.0 } else { 0.0 };
                        return match c {
                            0 => (x0 + lx + off + 0.8) / 8.0,
                            1 => (y0 + ly + 0.7) / 4.0,
                            2 => (x0 + lx + 1.05) / 8.0,
                            _ => (y0 + ly + 1.4) / 4.0,
                        };
                    }
                    let i = (r * 8 + l) as f32;
                    match (r * 8 + l) % 13 {
                        0 => 0.9375,
                        1 if r == 8 => f32::NAN,
                        _ => (i * 0.173).fract() * 1.6 - 0.3,
                    }
                }))
            })
            .collect();
        let all: Lanes = bytemuck::cast(wide::u32x8::splat(!0));
        let mut mask = vec![all; GROUPS];
        let mut out = vec![f32x8::ZERO; 4 * GROUPS];
        let mut io = FragmentIo {
            groups: GROUPS,
            inputs: &[],
            frag_coord: &fc,
            mask: &mut mask,
            outputs: &mut out,
        };
        shader.run(&res, &mut io);
        if backend == Backend::Llvm
            && let Some(code) = shader.jit()
        {
            assert_eq!(code.variant_count(), 1, "the lookups were not inlined");
        }
        out.iter()
            .flat_map(|v| v.to_array().map(f32::to_bits))
            .collect()
    }

    #[test]
    fn both_pair_fetches_match_the_interpreter() {
        if super::super::available().is_err() {
            assert!(std::env::var_os(crate::REQUIRE_LLVM_ENV).is_none());
            return;
        }
        for wrap in [TexWrap::ClampToEdge, TexWrap::Repeat] {
            let want = run(Backend::Interp, wrap);
            for gather in [false, true] {
                FORCE_GATHERS.set(Some(gather));
                let got = run(Backend::Llvm, wrap);
                FORCE_GATHERS.set(None);
                assert!(want == got, "{wrap:?}, gathers {gather}: differs");
            }
        }
    }
}
