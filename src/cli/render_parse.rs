//! The values of `render`'s flags that are more than a word: sizes, frame ranges, colour ranges
//! and colormaps, each refused with the flag's name and the text given.

use anyhow::{Context, Result, anyhow, bail};

pub(super) fn parse_colormap(s: &str) -> Result<orbitfield::render::colormap::Colormap> {
    use orbitfield::render::colormap::Colormap;
    Ok(match s.to_ascii_lowercase().as_str() {
        "diverging" | "bwr" | "blue-white-red" => Colormap::Diverging,
        "rwb" | "red-white-blue" => Colormap::RedWhiteBlue,
        "viridis" => Colormap::Viridis,
        "gray" | "grey" => Colormap::Gray,
        _ => bail!("--colormap: expected diverging, red-white-blue, viridis or gray, found {s:?}"),
    })
}

pub(super) fn parse_color_range(s: &str) -> Result<[f32; 2]> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| anyhow!("--color-range: expected LO,HI, found {s:?}"))?;
    let lo: f32 = a
        .trim()
        .parse()
        .with_context(|| format!("--color-range: bad number {a:?}"))?;
    let hi: f32 = b
        .trim()
        .parse()
        .with_context(|| format!("--color-range: bad number {b:?}"))?;
    if !lo.is_finite() || !hi.is_finite() || lo == hi {
        bail!("--color-range: expected two different finite values, found {s:?}");
    }
    Ok([lo, hi])
}

/// Parses "WxH".
pub fn parse_size(s: &str) -> Result<[u32; 2]> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow!("--size: expected WxH, found {s:?}"))?;
    let w: u32 = w
        .trim()
        .parse()
        .with_context(|| format!("--size: bad width in {s:?}"))?;
    let h: u32 = h
        .trim()
        .parse()
        .with_context(|| format!("--size: bad height in {s:?}"))?;
    if !(1..=8192).contains(&w) || !(1..=8192).contains(&h) {
        bail!("--size: each side must be 1..8192 pixels, found {w}x{h}");
    }
    Ok([w, h])
}

/// Parses "A:B" or "A:B:S" into a range (B excluded) and its step (S, when given), as `grid
/// --frames` writes a range.
pub fn parse_range(s: &str) -> Result<(std::ops::Range<usize>, Option<usize>)> {
    let parts: Vec<&str> = s.split(':').map(str::trim).collect();
    let (a, b, step) = match parts.as_slice() {
        [a, b] => (a, b, None),
        [a, b, st] => (a, b, Some(st)),
        _ => bail!("--frames: expected A:B or A:B:S, found {s:?}"),
    };
    let a: usize = a.parse().with_context(|| format!("--frames: bad start in {s:?}"))?;
    let b: usize = b.parse().with_context(|| format!("--frames: bad end in {s:?}"))?;
    if b <= a {
        bail!("--frames: the end must be after the start, found {s:?}");
    }
    let step = match step {
        Some(st) => Some(
            st.parse::<usize>()
                .ok()
                .filter(|&v| v > 0)
                .with_context(|| format!("--frames: the step must be a positive whole number, found {s:?}"))?,
        ),
        None => None,
    };
    Ok((a..b, step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_and_ranges() {
        assert_eq!(parse_size("640x480").unwrap(), [640, 480]);
        assert!(parse_size("0x10").is_err());
        assert!(parse_size("100000x10").is_err());
        assert!(parse_size("abc").is_err());
        assert_eq!(parse_range("2:5").unwrap(), (2..5, None));
        assert_eq!(parse_range("0:98:10").unwrap(), (0..98, Some(10)));
        assert!(parse_range("5:5").is_err());
        assert!(parse_range("0:9:0").is_err());
        assert!(parse_range("0:9:x").is_err());
        assert!(parse_colormap("rainbow").is_err());
    }
}
