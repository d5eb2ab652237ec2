//! `enum pipe_format`: the formats ferropipe knows, with their layout.
//!
//! One table (the `formats!` invocation below) drives the enum, the Gallium
//! names and the per-format description, so they cannot drift apart.  Pixel
//! packing and unpacking lives in [`crate::pack`].
//!
//! Channel order follows Gallium's naming: `R8G8B8A8_UNORM` stores R in the
//! byte at the lowest address; packed formats (`B5G6R5_UNORM`,
//! `R10G10B10A2_UNORM`, `Z24_UNORM_S8_UINT`) name channels from the least
//! significant bit of a little-endian word.

/// How the bits of a channel are interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelType {
    /// Unsigned normalised fixed point, `v / (2^n - 1)`.
    Unorm,
    /// Signed normalised fixed point, `max(v / (2^(n-1) - 1), -1)`.
    Snorm,
    /// Unsigned integer converted to float without normalisation (vertex fetch).
    Uscaled,
    /// Signed integer converted to float without normalisation (vertex fetch).
    Sscaled,
    /// Unsigned pure integer.
    Uint,
    /// Signed pure integer.
    Sint,
    /// IEEE float (16 or 32 bits), or the unsigned small floats of R11G11B10.
    Float,
    /// Bits that hold nothing (the `X` in `B8G8R8X8`).
    Void,
}

/// What a format holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatKind {
    /// Colour channels (render targets, textures, vertex data).
    Color,
    /// Depth only (`Z16_UNORM`, `Z32_FLOAT`, ...).
    Depth,
    /// Stencil only (`S8_UINT`).
    Stencil,
    /// Depth and stencil in one pixel (`Z24_UNORM_S8_UINT`, ...).
    DepthStencil,
}

/// The layout of one format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatDesc {
    /// The format described.
    pub format: Format,
    /// Its Gallium spelling (`PIPE_FORMAT_R8G8B8A8_UNORM`).
    pub name: &'static str,
    /// Bytes per pixel (every supported format is 1x1 blocks).
    pub block_bytes: u32,
    /// Colour, depth, stencil or depth/stencil.
    pub kind: FormatKind,
    /// Bit width of channels in storage order (0 = absent).
    pub channel_bits: [u8; 4],
    /// Type of channels in storage order.
    pub channel_type: ChannelType,
    /// Which stored channel feeds R, G, B, A (4 = constant 0, 5 = constant 1).
    /// For depth/stencil formats R is depth and G is stencil where present.
    pub swizzle: [u8; 4],
    /// Whether channels are packed into one little-endian word (bit order)
    /// rather than laid out as consecutive array elements (byte order).
    pub packed: bool,
    /// sRGB-encoded colour channels (alpha stays linear).
    pub srgb: bool,
}

impl FormatDesc {
    /// Pure integer format (feeds integer shader types, no blending).
    pub fn is_integer(&self) -> bool {
        matches!(self.channel_type, ChannelType::Uint | ChannelType::Sint)
    }

    /// Has a depth component.
    pub fn has_depth(&self) -> bool {
        matches!(self.kind, FormatKind::Depth | FormatKind::DepthStencil)
    }

    /// Has a stencil component.
    pub fn has_stencil(&self) -> bool {
        matches!(self.kind, FormatKind::Stencil | FormatKind::DepthStencil)
    }

    /// Number of channels present in storage (X channels included).
    pub fn nr_channels(&self) -> usize {
        self.channel_bits.iter().filter(|&&b| b != 0).count()
    }
}

const X: u8 = 0;
const Y: u8 = 1;
const Z: u8 = 2;
const W: u8 = 3;
const C0: u8 = 4;
const C1: u8 = 5;

macro_rules! formats {
    ( $( $variant:ident = $gname:literal : $bytes:expr, $kind:ident, [$($bits:expr),*], $ty:ident, [$sr:expr, $sg:expr, $sb:expr, $sa:expr], $packed:expr, $srgb:expr; )* ) => {
        /// `enum pipe_format`: the formats ferropipe implements.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Format {
            $(
                #[doc = concat!("`", $gname, "`: ", stringify!($bytes), " bytes per pixel.")]
                $variant
            ),*
        }

        impl Format {
            /// Every format, in declaration order.
            pub const ALL: &'static [Format] = &[$(Format::$variant),*];

            /// The Gallium spelling, e.g. `PIPE_FORMAT_R8G8B8A8_UNORM`.
            pub fn gallium_name(self) -> &'static str {
                self.desc().name
            }

            /// Parses the Gallium spelling.
            pub fn from_gallium_name(name: &str) -> Option<Self> {
                match name { $($gname => Some(Format::$variant),)* _ => None }
            }

            /// The format's layout.
            pub fn desc(self) -> &'static FormatDesc {
                &FORMAT_DESCS[self as usize]
            }
        }

        /// One description per format, indexed by `Format as usize`.
        static FORMAT_DESCS: &[FormatDesc] = &[
            $( FormatDesc {
                format: Format::$variant,
                name: $gname,
                block_bytes: $bytes,
                kind: FormatKind::$kind,
                channel_bits: pad_bits(&[$($bits),*]),
                channel_type: ChannelType::$ty,
                swizzle: [$sr, $sg, $sb, $sa],
                packed: $packed,
                srgb: $srgb,
            }, )*
        ];
    };
}

const fn pad_bits(bits: &[u8]) -> [u8; 4] {
    let mut out = [0u8; 4];
    let mut i = 0;
    while i < bits.len() {
        out[i] = bits[i];
        i += 1;
    }
    out
}

formats! {
    // 8-bit RGBA family (array layout: channel 0 at the lowest byte).
    R8G8B8A8_UNORM = "PIPE_FORMAT_R8G8B8A8_UNORM": 4, Color, [8, 8, 8, 8], Unorm, [X, Y, Z, W], false, false;
    R8G8B8X8_UNORM = "PIPE_FORMAT_R8G8B8X8_UNORM": 4, Color, [8, 8, 8, 8], Unorm, [X, Y, Z, C1], false, false;
    B8G8R8A8_UNORM = "PIPE_FORMAT_B8G8R8A8_UNORM": 4, Color, [8, 8, 8, 8], Unorm, [Z, Y, X, W], false, false;
    B8G8R8X8_UNORM = "PIPE_FORMAT_B8G8R8X8_UNORM": 4, Color, [8, 8, 8, 8], Unorm, [Z, Y, X, C1], false, false;
    A8R8G8B8_UNORM = "PIPE_FORMAT_A8R8G8B8_UNORM": 4, Color, [8, 8, 8, 8], Unorm, [Y, Z, W, X], false, false;
    A8B8G8R8_UNORM = "PIPE_FORMAT_A8B8G8R8_UNORM": 4, Color, [8, 8, 8, 8], Unorm, [W, Z, Y, X], false, false;
    R8G8B8A8_SRGB = "PIPE_FORMAT_R8G8B8A8_SRGB": 4, Color, [8, 8, 8, 8], Unorm, [X, Y, Z, W], false, true;
    B8G8R8A8_SRGB = "PIPE_FORMAT_B8G8R8A8_SRGB": 4, Color, [8, 8, 8, 8], Unorm, [Z, Y, X, W], false, true;
    R8G8B8X8_SRGB = "PIPE_FORMAT_R8G8B8X8_SRGB": 4, Color, [8, 8, 8, 8], Unorm, [X, Y, Z, C1], false, true;
    B8G8R8X8_SRGB = "PIPE_FORMAT_B8G8R8X8_SRGB": 4, Color, [8, 8, 8, 8], Unorm, [Z, Y, X, C1], false, true;
    R8G8B8A8_SNORM = "PIPE_FORMAT_R8G8B8A8_SNORM": 4, Color, [8, 8, 8, 8], Snorm, [X, Y, Z, W], false, false;
    R8G8B8A8_UINT = "PIPE_FORMAT_R8G8B8A8_UINT": 4, Color, [8, 8, 8, 8], Uint, [X, Y, Z, W], false, false;
    R8G8B8A8_SINT = "PIPE_FORMAT_R8G8B8A8_SINT": 4, Color, [8, 8, 8, 8], Sint, [X, Y, Z, W], false, false;
    R8G8B8A8_USCALED = "PIPE_FORMAT_R8G8B8A8_USCALED": 4, Color, [8, 8, 8, 8], Uscaled, [X, Y, Z, W], false, false;
    R8G8B8A8_SSCALED = "PIPE_FORMAT_R8G8B8A8_SSCALED": 4, Color, [8, 8, 8, 8], Sscaled, [X, Y, Z, W], false, false;
    R8G8B8_UNORM = "PIPE_FORMAT_R8G8B8_UNORM": 3, Color, [8, 8, 8], Unorm, [X, Y, Z, C1], false, false;
    R8G8B8_SNORM = "PIPE_FORMAT_R8G8B8_SNORM": 3, Color, [8, 8, 8], Snorm, [X, Y, Z, C1], false, false;
    R8G8B8_UINT = "PIPE_FORMAT_R8G8B8_UINT": 3, Color, [8, 8, 8], Uint, [X, Y, Z, C1], false, false;
    R8G8B8_SINT = "PIPE_FORMAT_R8G8B8_SINT": 3, Color, [8, 8, 8], Sint, [X, Y, Z, C1], false, false;
    R8G8_UNORM = "PIPE_FORMAT_R8G8_UNORM": 2, Color, [8, 8], Unorm, [X, Y, C0, C1], false, false;
    R8G8_SNORM = "PIPE_FORMAT_R8G8_SNORM": 2, Color, [8, 8], Snorm, [X, Y, C0, C1], false, false;
    R8G8_UINT = "PIPE_FORMAT_R8G8_UINT": 2, Color, [8, 8], Uint, [X, Y, C0, C1], false, false;
    R8G8_SINT = "PIPE_FORMAT_R8G8_SINT": 2, Color, [8, 8], Sint, [X, Y, C0, C1], false, false;
    R8G8_USCALED = "PIPE_FORMAT_R8G8_USCALED": 2, Color, [8, 8], Uscaled, [X, Y, C0, C1], false, false;
    R8G8_SSCALED = "PIPE_FORMAT_R8G8_SSCALED": 2, Color, [8, 8], Sscaled, [X, Y, C0, C1], false, false;
    R8_UNORM = "PIPE_FORMAT_R8_UNORM": 1, Color, [8], Unorm, [X, C0, C0, C1], false, false;
    R8_SNORM = "PIPE_FORMAT_R8_SNORM": 1, Color, [8], Snorm, [X, C0, C0, C1], false, false;
    R8_UINT = "PIPE_FORMAT_R8_UINT": 1, Color, [8], Uint, [X, C0, C0, C1], false, false;
    R8_SINT = "PIPE_FORMAT_R8_SINT": 1, Color, [8], Sint, [X, C0, C0, C1], false, false;
    R8_USCALED = "PIPE_FORMAT_R8_USCALED": 1, Color, [8], Uscaled, [X, C0, C0, C1], false, false;
    R8_SSCALED = "PIPE_FORMAT_R8_SSCALED": 1, Color, [8], Sscaled, [X, C0, C0, C1], false, false;
    A8_UNORM = "PIPE_FORMAT_A8_UNORM": 1, Color, [8], Unorm, [C0, C0, C0, X], false, false;
    L8_UNORM = "PIPE_FORMAT_L8_UNORM": 1, Color, [8], Unorm, [X, X, X, C1], false, false;
    // 16-bit channels.
    R16G16B16A16_UNORM = "PIPE_FORMAT_R16G16B16A16_UNORM": 8, Color, [16, 16, 16, 16], Unorm, [X, Y, Z, W], false, false;
    R16G16B16A16_SNORM = "PIPE_FORMAT_R16G16B16A16_SNORM": 8, Color, [16, 16, 16, 16], Snorm, [X, Y, Z, W], false, false;
    R16G16B16A16_UINT = "PIPE_FORMAT_R16G16B16A16_UINT": 8, Color, [16, 16, 16, 16], Uint, [X, Y, Z, W], false, false;
    R16G16B16A16_SINT = "PIPE_FORMAT_R16G16B16A16_SINT": 8, Color, [16, 16, 16, 16], Sint, [X, Y, Z, W], false, false;
    R16G16B16A16_USCALED = "PIPE_FORMAT_R16G16B16A16_USCALED": 8, Color, [16, 16, 16, 16], Uscaled, [X, Y, Z, W], false, false;
    R16G16B16A16_SSCALED = "PIPE_FORMAT_R16G16B16A16_SSCALED": 8, Color, [16, 16, 16, 16], Sscaled, [X, Y, Z, W], false, false;
    R16G16B16A16_FLOAT = "PIPE_FORMAT_R16G16B16A16_FLOAT": 8, Color, [16, 16, 16, 16], Float, [X, Y, Z, W], false, false;
    R16G16B16_UNORM = "PIPE_FORMAT_R16G16B16_UNORM": 6, Color, [16, 16, 16], Unorm, [X, Y, Z, C1], false, false;
    R16G16B16_SNORM = "PIPE_FORMAT_R16G16B16_SNORM": 6, Color, [16, 16, 16], Snorm, [X, Y, Z, C1], false, false;
    R16G16B16_UINT = "PIPE_FORMAT_R16G16B16_UINT": 6, Color, [16, 16, 16], Uint, [X, Y, Z, C1], false, false;
    R16G16B16_SINT = "PIPE_FORMAT_R16G16B16_SINT": 6, Color, [16, 16, 16], Sint, [X, Y, Z, C1], false, false;
    R16G16B16_FLOAT = "PIPE_FORMAT_R16G16B16_FLOAT": 6, Color, [16, 16, 16], Float, [X, Y, Z, C1], false, false;
    R16G16_UNORM = "PIPE_FORMAT_R16G16_UNORM": 4, Color, [16, 16], Unorm, [X, Y, C0, C1], false, false;
    R16G16_SNORM = "PIPE_FORMAT_R16G16_SNORM": 4, Color, [16, 16], Snorm, [X, Y, C0, C1], false, false;
    R16G16_UINT = "PIPE_FORMAT_R16G16_UINT": 4, Color, [16, 16], Uint, [X, Y, C0, C1], false, false;
    R16G16_SINT = "PIPE_FORMAT_R16G16_SINT": 4, Color, [16, 16], Sint, [X, Y, C0, C1], false, false;
    R16G16_USCALED = "PIPE_FORMAT_R16G16_USCALED": 4, Color, [16, 16], Uscaled, [X, Y, C0, C1], false, false;
    R16G16_SSCALED = "PIPE_FORMAT_R16G16_SSCALED": 4, Color, [16, 16], Sscaled, [X, Y, C0, C1], false, false;
    R16G16_FLOAT = "PIPE_FORMAT_R16G16_FLOAT": 4, Color, [16, 16], Float, [X, Y, C0, C1], false, false;
    R16_UNORM = "PIPE_FORMAT_R16_UNORM": 2, Color, [16], Unorm, [X, C0, C0, C1], false, false;
    R16_SNORM = "PIPE_FORMAT_R16_SNORM": 2, Color, [16], Snorm, [X, C0, C0, C1], false, false;
    R16_UINT = "PIPE_FORMAT_R16_UINT": 2, Color, [16], Uint, [X, C0, C0, C1], false, false;
    R16_SINT = "PIPE_FORMAT_R16_SINT": 2, Color, [16], Sint, [X, C0, C0, C1], false, false;
    R16_USCALED = "PIPE_FORMAT_R16_USCALED": 2, Color, [16], Uscaled, [X, C0, C0, C1], false, false;
    R16_SSCALED = "PIPE_FORMAT_R16_SSCALED": 2, Color, [16], Sscaled, [X, C0, C0, C1], false, false;
    R16_FLOAT = "PIPE_FORMAT_R16_FLOAT": 2, Color, [16], Float, [X, C0, C0, C1], false, false;
    // 32-bit channels.
    R32G32B32A32_FLOAT = "PIPE_FORMAT_R32G32B32A32_FLOAT": 16, Color, [32, 32, 32, 32], Float, [X, Y, Z, W], false, false;
    R32G32B32A32_UINT = "PIPE_FORMAT_R32G32B32A32_UINT": 16, Color, [32, 32, 32, 32], Uint, [X, Y, Z, W], false, false;
    R32G32B32A32_SINT = "PIPE_FORMAT_R32G32B32A32_SINT": 16, Color, [32, 32, 32, 32], Sint, [X, Y, Z, W], false, false;
    R32G32B32_FLOAT = "PIPE_FORMAT_R32G32B32_FLOAT": 12, Color, [32, 32, 32], Float, [X, Y, Z, C1], false, false;
    R32G32B32_UINT = "PIPE_FORMAT_R32G32B32_UINT": 12, Color, [32, 32, 32], Uint, [X, Y, Z, C1], false, false;
    R32G32B32_SINT = "PIPE_FORMAT_R32G32B32_SINT": 12, Color, [32, 32, 32], Sint, [X, Y, Z, C1], false, false;
    R32G32_FLOAT = "PIPE_FORMAT_R32G32_FLOAT": 8, Color, [32, 32], Float, [X, Y, C0, C1], false, false;
    R32G32_UINT = "PIPE_FORMAT_R32G32_UINT": 8, Color, [32, 32], Uint, [X, Y, C0, C1], false, false;
    R32G32_SINT = "PIPE_FORMAT_R32G32_SINT": 8, Color, [32, 32], Sint, [X, Y, C0, C1], false, false;
    R32_FLOAT = "PIPE_FORMAT_R32_FLOAT": 4, Color, [32], Float, [X, C0, C0, C1], false, false;
    R32_UINT = "PIPE_FORMAT_R32_UINT": 4, Color, [32], Uint, [X, C0, C0, C1], false, false;
    R32_SINT = "PIPE_FORMAT_R32_SINT": 4, Color, [32], Sint, [X, C0, C0, C1], false, false;
    // 32-bit normalised and scaled channels: vertex formats only (no
    // renderable or sampled use; see `Screen::is_format_supported`).
    R32G32B32A32_UNORM = "PIPE_FORMAT_R32G32B32A32_UNORM": 16, Color, [32, 32, 32, 32], Unorm, [X, Y, Z, W], false, false;
    R32G32B32_UNORM = "PIPE_FORMAT_R32G32B32_UNORM": 12, Color, [32, 32, 32], Unorm, [X, Y, Z, C1], false, false;
    R32G32_UNORM = "PIPE_FORMAT_R32G32_UNORM": 8, Color, [32, 32], Unorm, [X, Y, C0, C1], false, false;
    R32_UNORM = "PIPE_FORMAT_R32_UNORM": 4, Color, [32], Unorm, [X, C0, C0, C1], false, false;
    R32G32B32A32_SNORM = "PIPE_FORMAT_R32G32B32A32_SNORM": 16, Color, [32, 32, 32, 32], Snorm, [X, Y, Z, W], false, false;
    R32G32B32_SNORM = "PIPE_FORMAT_R32G32B32_SNORM": 12, Color, [32, 32, 32], Snorm, [X, Y, Z, C1], false, false;
    R32G32_SNORM = "PIPE_FORMAT_R32G32_SNORM": 8, Color, [32, 32], Snorm, [X, Y, C0, C1], false, false;
    R32_SNORM = "PIPE_FORMAT_R32_SNORM": 4, Color, [32], Snorm, [X, C0, C0, C1], false, false;
    R32G32B32A32_USCALED = "PIPE_FORMAT_R32G32B32A32_USCALED": 16, Color, [32, 32, 32, 32], Uscaled, [X, Y, Z, W], false, false;
    R32G32B32_USCALED = "PIPE_FORMAT_R32G32B32_USCALED": 12, Color, [32, 32, 32], Uscaled, [X, Y, Z, C1], false, false;
    R32G32_USCALED = "PIPE_FORMAT_R32G32_USCALED": 8, Color, [32, 32], Uscaled, [X, Y, C0, C1], false, false;
    R32_USCALED = "PIPE_FORMAT_R32_USCALED": 4, Color, [32], Uscaled, [X, C0, C0, C1], false, false;
    R32G32B32A32_SSCALED = "PIPE_FORMAT_R32G32B32A32_SSCALED": 16, Color, [32, 32, 32, 32], Sscaled, [X, Y, Z, W], false, false;
    R32G32B32_SSCALED = "PIPE_FORMAT_R32G32B32_SSCALED": 12, Color, [32, 32, 32], Sscaled, [X, Y, Z, C1], false, false;
    R32G32_SSCALED = "PIPE_FORMAT_R32G32_SSCALED": 8, Color, [32, 32], Sscaled, [X, Y, C0, C1], false, false;
    R32_SSCALED = "PIPE_FORMAT_R32_SSCALED": 4, Color, [32], Sscaled, [X, C0, C0, C1], false, false;
    // Luminance / intensity / alpha (legacy GL formats llvmpipe also offers).
    L8A8_UNORM = "PIPE_FORMAT_L8A8_UNORM": 2, Color, [8, 8], Unorm, [X, X, X, Y], false, false;
    I8_UNORM = "PIPE_FORMAT_I8_UNORM": 1, Color, [8], Unorm, [X, X, X, X], false, false;
    L16_UNORM = "PIPE_FORMAT_L16_UNORM": 2, Color, [16], Unorm, [X, X, X, C1], false, false;
    A16_UNORM = "PIPE_FORMAT_A16_UNORM": 2, Color, [16], Unorm, [C0, C0, C0, X], false, false;
    // Packed colour formats (bit order from the LSB of a little-endian word).
    B5G6R5_UNORM = "PIPE_FORMAT_B5G6R5_UNORM": 2, Color, [5, 6, 5], Unorm, [Z, Y, X, C1], true, false;
    B5G5R5A1_UNORM = "PIPE_FORMAT_B5G5R5A1_UNORM": 2, Color, [5, 5, 5, 1], Unorm, [Z, Y, X, W], true, false;
    B4G4R4A4_UNORM = "PIPE_FORMAT_B4G4R4A4_UNORM": 2, Color, [4, 4, 4, 4], Unorm, [Z, Y, X, W], true, false;
    R10G10B10A2_UNORM = "PIPE_FORMAT_R10G10B10A2_UNORM": 4, Color, [10, 10, 10, 2], Unorm, [X, Y, Z, W], true, false;
    B10G10R10A2_UNORM = "PIPE_FORMAT_B10G10R10A2_UNORM": 4, Color, [10, 10, 10, 2], Unorm, [Z, Y, X, W], true, false;
    R10G10B10A2_UINT = "PIPE_FORMAT_R10G10B10A2_UINT": 4, Color, [10, 10, 10, 2], Uint, [X, Y, Z, W], true, false;
    R10G10B10A2_SNORM = "PIPE_FORMAT_R10G10B10A2_SNORM": 4, Color, [10, 10, 10, 2], Snorm, [X, Y, Z, W], true, false;
    R10G10B10A2_USCALED = "PIPE_FORMAT_R10G10B10A2_USCALED": 4, Color, [10, 10, 10, 2], Uscaled, [X, Y, Z, W], true, false;
    R10G10B10A2_SSCALED = "PIPE_FORMAT_R10G10B10A2_SSCALED": 4, Color, [10, 10, 10, 2], Sscaled, [X, Y, Z, W], true, false;
    B10G10R10A2_UINT = "PIPE_FORMAT_B10G10R10A2_UINT": 4, Color, [10, 10, 10, 2], Uint, [Z, Y, X, W], true, false;
    B5G5R5X1_UNORM = "PIPE_FORMAT_B5G5R5X1_UNORM": 2, Color, [5, 5, 5, 1], Unorm, [Z, Y, X, C1], true, false;
    B4G4R4X4_UNORM = "PIPE_FORMAT_B4G4R4X4_UNORM": 2, Color, [4, 4, 4, 4], Unorm, [Z, Y, X, C1], true, false;
    R11G11B10_FLOAT = "PIPE_FORMAT_R11G11B10_FLOAT": 4, Color, [11, 11, 10], Float, [X, Y, Z, C1], true, false;
    // Three 9-bit mantissas sharing a 5-bit exponent (bias 15).
    R9G9B9E5_FLOAT = "PIPE_FORMAT_R9G9B9E5_FLOAT": 4, Color, [9, 9, 9, 5], Float, [X, Y, Z, C1], true, false;
    // Depth and stencil.  R = depth, G = stencil (see FormatDesc::swizzle).
    Z16_UNORM = "PIPE_FORMAT_Z16_UNORM": 2, Depth, [16], Unorm, [X, C0, C0, C1], true, false;
    Z32_UNORM = "PIPE_FORMAT_Z32_UNORM": 4, Depth, [32], Unorm, [X, C0, C0, C1], true, false;
    Z32_FLOAT = "PIPE_FORMAT_Z32_FLOAT": 4, Depth, [32], Float, [X, C0, C0, C1], true, false;
    Z24_UNORM_S8_UINT = "PIPE_FORMAT_Z24_UNORM_S8_UINT": 4, DepthStencil, [24, 8], Unorm, [X, Y, C0, C1], true, false;
    S8_UINT_Z24_UNORM = "PIPE_FORMAT_S8_UINT_Z24_UNORM": 4, DepthStencil, [8, 24], Unorm, [Y, X, C0, C1], true, false;
    Z24X8_UNORM = "PIPE_FORMAT_Z24X8_UNORM": 4, Depth, [24, 8], Unorm, [X, C0, C0, C1], true, false;
    X8Z24_UNORM = "PIPE_FORMAT_X8Z24_UNORM": 4, Depth, [8, 24], Unorm, [Y, C0, C0, C1], true, false;
    Z32_FLOAT_S8X24_UINT = "PIPE_FORMAT_Z32_FLOAT_S8X24_UINT": 8, DepthStencil, [32, 8, 24], Float, [X, Y, C0, C1], true, false;
    S8_UINT = "PIPE_FORMAT_S8_UINT": 1, Stencil, [8], Uint, [C0, X, C0, C1], true, false;
}

impl Format {
    /// The same layout without sRGB encoding (`R8G8B8A8_SRGB` →
    /// `R8G8B8A8_UNORM`); other formats map to themselves.  Used to read an
    /// sRGB surface's stored bytes rather than its linear values.
    pub fn linear(self) -> Format {
        match self {
            Format::R8G8B8A8_SRGB => Format::R8G8B8A8_UNORM,
            Format::B8G8R8A8_SRGB => Format::B8G8R8A8_UNORM,
            Format::R8G8B8X8_SRGB => Format::R8G8B8X8_UNORM,
            Format::B8G8R8X8_SRGB => Format::B8G8R8X8_UNORM,
            f => f,
        }
    }
}

impl core::fmt::Display for Format {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.gallium_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes_add_up() {
        for f in Format::ALL {
            let d = f.desc();
            assert_eq!(d.format, *f);
            assert_eq!(Format::from_gallium_name(d.name), Some(*f));
            let l = f.linear().desc();
            assert!(!l.srgb && l.block_bytes == d.block_bytes && l.swizzle == d.swizzle);
            let bits: u32 = d.channel_bits.iter().map(|&b| b as u32).sum();
            assert_eq!(
                bits,
                d.block_bytes * 8,
                "{f}: channel bits must fill the block"
            );
        }
    }
}
