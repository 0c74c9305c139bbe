//! Colours by name: the words the command line, session files and `render --rep` take for one
//! colour (a name, `#rrggbb` or `r,g,b`), and the word that reads back as a given colour.

/// The colour a name, `#rrggbb` or `r,g,b` gives (the command line's and session files' colours).
pub fn parse_color(text: &str) -> Option<[u8; 3]> {
    const NAMED: &[(&str, [u8; 3])] = &[
        ("black", [0, 0, 0]),
        ("white", [255, 255, 255]),
        ("gray", [128, 128, 128]),
        ("grey", [128, 128, 128]),
        ("red", [220, 40, 40]),
        ("green", [40, 170, 60]),
        ("blue", [40, 80, 220]),
        ("yellow", [240, 210, 40]),
        ("orange", [245, 140, 30]),
        ("purple", [140, 60, 180]),
        ("cyan", [40, 200, 220]),
        ("magenta", [210, 50, 190]),
    ];
    let t = text.trim().to_ascii_lowercase();
    if let Some((_, c)) = NAMED.iter().find(|(n, _)| *n == t) {
        return Some(*c);
    }
    if let Some(hex) = t.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let v = u32::from_str_radix(hex, 16).ok()?;
        return Some([(v >> 16) as u8, (v >> 8) as u8, v as u8]);
    }
    let parts: Vec<&str> = t.split(',').collect();
    if parts.len() == 3 {
        let mut c = [0u8; 3];
        for (k, p) in parts.iter().enumerate() {
            c[k] = p.trim().parse().ok()?;
        }
        return Some(c);
    }
    None
}

/// The word for `rgb` that [`parse_color`] reads back: its name when it has one, else `#rrggbb`.
pub fn color_word(rgb: [u8; 3]) -> String {
    const NAMES: [&str; 11] = [
        "black", "white", "grey", "red", "green", "blue", "yellow", "orange", "purple", "cyan", "magenta",
    ];
    NAMES.iter().find(|n| parse_color(n) == Some(rgb)).map_or_else(
        || format!("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]),
        |n| (*n).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_words_read_back() {
        for rgb in [[220, 40, 40], [1, 2, 3], [255, 255, 255], [128, 128, 128]] {
            assert_eq!(parse_color(&color_word(rgb)), Some(rgb), "{}", color_word(rgb));
        }
        assert_eq!(color_word([220, 40, 40]), "red");
        assert_eq!(color_word([1, 2, 255]), "#0102ff");
    }
}
