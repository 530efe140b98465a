//! `lockstep export --format png`: the exported SVG drawn with resvg, at twice its size as the
//! page draws it, stamped with the same run metadata, so that importing the picture reproduces
//! the run. This lives in the command line, not in the library, because it reads the system's
//! fonts: the core does no I/O.

use resvg::{tiny_skia, usvg};

/// The scale the page draws its PNG at (a canvas twice the SVG's size), kept equal here so the
/// two files have the same dimensions unless `--scale` asks for another.
pub const SCALE: f32 = 2.0;
/// The scales `--scale` takes: from a picture at the SVG's own size to four times it.
pub const SCALE_MIN: f32 = 1.0;
pub const SCALE_MAX: f32 = 4.0;

/// The most pixels one picture may have (64 million: 256 MB of RGBA).
const PIXELS_MAX: u64 = 64 * 1024 * 1024;

/// Families tried, in order, for the SVG's generic `sans-serif`: the first one the system has is
/// used. Debian's `fonts-dejavu-core` (installed by `scripts/install.sh`) provides the first.
const SANS: [&str; 4] = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"];

/// The SVG as PNG bytes carrying `meta` under `keyword`.
pub fn png_of_svg(svg: &str, keyword: &str, meta: &str, scale: f32) -> Result<Vec<u8>, String> {
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    if fonts.is_empty() {
        return Err(
            "no font was found on this system, so the picture's text cannot be drawn; \
             install one (on Debian: apt-get install fonts-dejavu-core) and try again"
                .into(),
        );
    }
    let family = SANS
        .iter()
        .find(|want| {
            fonts
                .faces()
                .any(|face| face.families.iter().any(|(name, _)| name == *want))
        })
        .map(|f| f.to_string())
        .or_else(|| {
            fonts
                .faces()
                .find_map(|face| face.families.first().map(|(name, _)| name.clone()))
        })
        .unwrap_or_default();
    fonts.set_sans_serif_family(family);
    let tree = usvg::Tree::from_str(svg, &options)
        .map_err(|e| format!("the exported SVG could not be read for drawing: {e}"))?;
    let size = tree.size().to_int_size().scale_by(scale).ok_or_else(|| {
        "the picture is too large to draw as PNG; export it as SVG instead".to_string()
    })?;
    // Bounded: a picture of the largest scenario is far below this, and a larger request is an
    // error rather than gigabytes of pixels.
    if u64::from(size.width()) * u64::from(size.height()) > PIXELS_MAX {
        return Err(format!(
            "a {}×{} PNG is larger than {PIXELS_MAX} pixels; export it as SVG instead",
            size.width(),
            size.height()
        ));
    }
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        format!(
            "a {}×{} PNG is too large to draw; export it as SVG instead",
            size.width(),
            size.height()
        )
    })?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let png = pixmap
        .encode_png()
        .map_err(|e| format!("the PNG could not be encoded: {e}"))?;
    lockstep::ui::export::png_with_text(&png, keyword, meta)
}
