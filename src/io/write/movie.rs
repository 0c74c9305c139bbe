//! Movies written without any program outside the project: H.264 in an MP4 file (Cisco's OpenH264
//! encoder, built from the source bundled in the `openh264` crate; boxes written by the `mp4`
//! crate), or one PNG image per frame in a folder.
//!
//! Owns [`MovieWriter`], [`MovieFormat`] and [`MovieError`]. Called by the viewer's movie job
//! (`jobs::movie`) and by `orbitfield render --movie`. Frames arrive one at a time as RGBA rows and
//! leave as encoded samples, so memory stays flat however long the movie. Everything is written
//! beside the output under a temporary name and renamed into place by [`MovieWriter::finish`]; a
//! writer dropped unfinished (cancelled, failed) removes what it wrote.
//!
//! The MP4 is what slide software and browsers play: constrained-baseline H.264, 4:2:0 chroma,
//! even width and height, BT.601 limited-range colours (said so in the stream's VUI), an IDR frame
//! every two seconds, no frames skipped by rate control.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Largest side of a movie frame in pixels.
pub const MAX_MOVIE_SIDE_PX: u32 = 8192;

/// What a movie is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MovieFormat {
    /// H.264 in an MP4 file.
    #[default]
    Mp4,
    /// One PNG per frame (`frame_00000.png`, ...) in a folder.
    PngFrames,
}

impl MovieFormat {
    /// The format an output path asks for: `.mp4` (or `.m4v`) a movie file, anything else a folder of
    /// PNG frames.
    pub fn from_path(path: &Path) -> MovieFormat {
        match path.extension().map(|e| e.to_ascii_lowercase()) {
            Some(e) if e == "mp4" || e == "m4v" => MovieFormat::Mp4,
            _ => MovieFormat::PngFrames,
        }
    }

    /// Why `path` cannot be written: a video format other than MP4 (`.avi`, `.gif`, `.mov`...),
    /// which would otherwise become a folder of PNG frames under that name.
    pub fn refused(path: &Path) -> Option<String> {
        const OTHER_VIDEO: [&str; 10] = ["avi", "mov", "gif", "mkv", "webm", "mpg", "mpeg", "wmv", "flv", "ogv"];
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        OTHER_VIDEO.contains(&ext.as_str()).then(|| {
            format!(
                "{}: movies are written as MP4 (name it .mp4) or as a folder of PNG frames (a name without a video extension)",
                path.display()
            )
        })
    }

    /// Words for the dialog.
    pub fn name(self) -> &'static str {
        match self {
            MovieFormat::Mp4 => "MP4 (H.264)",
            MovieFormat::PngFrames => "PNG frames in a folder",
        }
    }
}

/// Why a movie could not be written.
#[derive(Debug, thiserror::Error)]
pub enum MovieError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: frame size {width}x{height}: {why}")]
    Size {
        path: PathBuf,
        width: u32,
        height: u32,
        why: &'static str,
    },
    #[error("{path}: frame rate {fps}: expected 1 to 120 frames per second")]
    Rate { path: PathBuf, fps: f32 },
    #[error("{path}: frame {frame}: {expected} bytes of RGBA expected, {found} given")]
    FrameBytes {
        path: PathBuf,
        frame: usize,
        expected: usize,
        found: usize,
    },
    #[error("{path}: frame {frame}: the H.264 encoder failed: {why}")]
    Encoder { path: PathBuf, frame: usize, why: String },
    #[error("{path}: frame {frame}: the encoder gave no picture (no slice NAL unit)")]
    NoPicture { path: PathBuf, frame: usize },
    #[error("{path}: writing the MP4 boxes failed: {why}")]
    Mux { path: PathBuf, why: String },
    #[error("{path}: frame {frame}: PNG encoding failed: {why}")]
    Png { path: PathBuf, frame: usize, why: String },
    #[error("{path}: no frames were given; nothing written")]
    Empty { path: PathBuf },
    #[error("{path}: exists and is not an empty folder; choose another name")]
    Occupied { path: PathBuf },
}

/// Where frames go, by format.
enum Sink {
    Mp4(Box<Mp4Sink>),
    Png { dir: PathBuf },
}

/// The encoder and the MP4 file being written (its track is added at the first frame, when the
/// encoder has produced the sequence and picture parameter sets the track's `avcC` box carries).
struct Mp4Sink {
    encoder: openh264::encoder::Encoder,
    mp4: Option<mp4::Mp4Writer<BufWriter<File>>>,
    /// The file until the track is added.
    file: Option<BufWriter<File>>,
    timescale: u32,
    ticks_per_frame: u32,
}

/// A movie being written: frames in, a file (or folder) out at [`MovieWriter::finish`].
pub struct MovieWriter {
    path: PathBuf,
    temp: PathBuf,
    format: MovieFormat,
    size_px: [u32; 2],
    frames: usize,
    sink: Option<Sink>,
    finished: bool,
}

impl std::fmt::Debug for MovieWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MovieWriter")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("size_px", &self.size_px)
            .field("frames", &self.frames)
            .finish()
    }
}

/// The temporary name beside `path` that the movie is written under.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "movie".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

impl MovieWriter {
    /// Starts a movie of `size_px` frames (even sides for MP4) at `fps` frames per second at `path`.
    pub fn create(path: &Path, format: MovieFormat, size_px: [u32; 2], fps: f32) -> Result<MovieWriter, MovieError> {
        let [w, h] = size_px;
        let size_error = |why| MovieError::Size {
            path: path.to_path_buf(),
            width: w,
            height: h,
            why,
        };
        if w == 0 || h == 0 || w > MAX_MOVIE_SIDE_PX || h > MAX_MOVIE_SIDE_PX {
            return Err(size_error("each side must be 1 to 8192 pixels"));
        }
        if !(fps.is_finite() && (1.0..=120.0).contains(&fps)) {
            return Err(MovieError::Rate {
                path: path.to_path_buf(),
                fps,
            });
        }
        let temp = temp_beside(path);
        let io = |source| MovieError::Io {
            path: temp.clone(),
            source,
        };
        let sink = match format {
            MovieFormat::Mp4 => {
                if w % 2 != 0 || h % 2 != 0 {
                    return Err(size_error("H.264 in 4:2:0 needs even sides"));
                }
                use openh264::encoder::{
                    Complexity, EncoderConfig, FrameRate, IntraFramePeriod, Profile, QpRange, RateControlMode,
                    UsageType, VuiConfig,
                };
                // Fixed quantisers (no rate control, so no frame is ever skipped): 16..24 keeps the
                // sharp edges and flat colours of rendered molecules.
                let config = EncoderConfig::new()
                    .profile(Profile::Baseline)
                    .usage_type(UsageType::CameraVideoRealTime)
                    .rate_control_mode(RateControlMode::Off)
                    .qp(QpRange::new(16, 24))
                    .max_frame_rate(FrameRate::from_hz(fps))
                    .skip_frames(false)
                    .complexity(Complexity::High)
                    .intra_frame_period(IntraFramePeriod::from_num_frames((2.0 * fps).round().max(1.0) as u32))
                    .num_threads(1)
                    .vui(VuiConfig::bt601());
                let encoder = openh264::encoder::Encoder::with_api_config(openh264::OpenH264API::from_source(), config)
                    .map_err(|e| MovieError::Encoder {
                        path: path.to_path_buf(),
                        frame: 0,
                        why: e.to_string(),
                    })?;
                let file = File::create(&temp).map_err(io)?;
                // Ticks of 1/1000 frame: whole numbers for 23.976, 29.97 and the like.
                let timescale = (f64::from(fps) * 1000.0).round() as u32;
                Sink::Mp4(Box::new(Mp4Sink {
                    encoder,
                    mp4: None,
                    file: Some(BufWriter::new(file)),
                    timescale,
                    ticks_per_frame: 1000,
                }))
            }
            MovieFormat::PngFrames => {
                if let Ok(mut entries) = std::fs::read_dir(path)
                    && entries.next().is_some()
                {
                    return Err(MovieError::Occupied {
                        path: path.to_path_buf(),
                    });
                }
                if path.is_file() {
                    return Err(MovieError::Occupied {
                        path: path.to_path_buf(),
                    });
                }
                std::fs::create_dir_all(&temp).map_err(io)?;
                Sink::Png { dir: temp.clone() }
            }
        };
        Ok(MovieWriter {
            path: path.to_path_buf(),
            temp,
            format,
            size_px,
            frames: 0,
            sink: Some(sink),
            finished: false,
        })
    }

    /// The output path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Appends one frame: `rgba`, tightly packed rows of the writer's size, top row first (alpha is
    /// ignored by MP4 and kept by PNG frames).
    pub fn push_rgba(&mut self, rgba: &[u8]) -> Result<(), MovieError> {
        let [w, h] = self.size_px;
        let expected = w as usize * h as usize * 4;
        if rgba.len() != expected {
            return Err(MovieError::FrameBytes {
                path: self.path.clone(),
                frame: self.frames,
                expected,
                found: rgba.len(),
            });
        }
        let frame = self.frames;
        match self.sink.as_mut() {
            Some(Sink::Mp4(sink)) => sink.push(&self.path, frame, rgba, self.size_px)?,
            Some(Sink::Png { dir }) => {
                let file = dir.join(format!("frame_{frame:05}.png"));
                let mut png = Vec::new();
                image::write_buffer_with_format(
                    &mut std::io::Cursor::new(&mut png),
                    rgba,
                    w,
                    h,
                    image::ExtendedColorType::Rgba8,
                    image::ImageFormat::Png,
                )
                .map_err(|e| MovieError::Png {
                    path: self.path.clone(),
                    frame,
                    why: e.to_string(),
                })?;
                std::fs::write(&file, &png).map_err(|source| MovieError::Io { path: file, source })?;
            }
            None => {}
        }
        self.frames += 1;
        Ok(())
    }

    /// Closes the movie and renames it into place; returns the number of frames.
    pub fn finish(mut self) -> Result<usize, MovieError> {
        if self.frames == 0 {
            return Err(MovieError::Empty {
                path: self.path.clone(),
            });
        }
        let io = |path: &Path, source| MovieError::Io {
            path: path.to_path_buf(),
            source,
        };
        match self.sink.take() {
            Some(Sink::Mp4(mut sink)) => {
                let mux = |why: String| MovieError::Mux {
                    path: self.path.clone(),
                    why,
                };
                let mut mp4 = sink.mp4.take().ok_or_else(|| mux("no track was written".into()))?;
                mp4.write_end().map_err(|e| mux(e.to_string()))?;
                let mut file = mp4.into_writer();
                file.flush().map_err(|e| io(&self.temp, e))?;
                let file = file.into_inner().map_err(|e| io(&self.temp, e.into_error()))?;
                file.sync_all().map_err(|e| io(&self.temp, e))?;
                std::fs::rename(&self.temp, &self.path).map_err(|e| io(&self.path, e))?;
            }
            Some(Sink::Png { dir }) => {
                if self.path.is_dir() {
                    // An empty folder (checked at the start) is replaced.
                    let _ = std::fs::remove_dir(&self.path);
                }
                std::fs::rename(&dir, &self.path).map_err(|e| io(&self.path, e))?;
            }
            None => {}
        }
        self.finished = true;
        Ok(self.frames)
    }
}

impl Drop for MovieWriter {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Cancelled or failed: nothing half-written is left.
        self.sink = None;
        if self.temp.is_dir() {
            let _ = std::fs::remove_dir_all(&self.temp);
        } else {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

impl Mp4Sink {
    fn push(&mut self, path: &Path, frame: usize, rgba: &[u8], size_px: [u32; 2]) -> Result<(), MovieError> {
        let [w, h] = size_px.map(|s| s as usize);
        let mut planes = Vec::new();
        rgba_to_i420(rgba, w, h, &mut planes);
        let yuv = openh264::formats::YUVBuffer::from_vec(planes, w, h);
        let encoder_error = |why: String| MovieError::Encoder {
            path: path.to_path_buf(),
            frame,
            why,
        };
        let millis = (frame as u64 * 1000 * u64::from(self.ticks_per_frame)) / u64::from(self.timescale.max(1));
        let stream = self
            .encoder
            .encode_at(&yuv, openh264::Timestamp::from_millis(millis))
            .map_err(|e| encoder_error(e.to_string()))?;
        let annex_b = stream.to_vec();
        let units = nal_units(&annex_b);
        let mut sps = None;
        let mut pps = None;
        let mut sample = Vec::with_capacity(annex_b.len() + 16);
        let mut is_sync = false;
        for unit in &units {
            let Some(&header) = unit.first() else { continue };
            match header & 0x1f {
                7 => sps = Some(unit.to_vec()),
                8 => pps = Some(unit.to_vec()),
                // Access unit delimiters and filler are not stored.
                9 | 12 => {}
                t => {
                    if t == 5 {
                        is_sync = true;
                    }
                    let len = u32::try_from(unit.len()).map_err(|_| encoder_error("NAL unit over 4 GiB".into()))?;
                    sample.extend_from_slice(&len.to_be_bytes());
                    sample.extend_from_slice(unit);
                }
            }
        }
        if !units
            .iter()
            .any(|u| u.first().is_some_and(|b| matches!(b & 0x1f, 1 | 5)))
        {
            return Err(MovieError::NoPicture {
                path: path.to_path_buf(),
                frame,
            });
        }
        let mux = |why: String| MovieError::Mux {
            path: path.to_path_buf(),
            why,
        };
        if self.mp4.is_none() {
            let (Some(sps), Some(pps)) = (sps, pps) else {
                return Err(mux(
                    "the first frame carries no sequence or picture parameter set".into()
                ));
            };
            let file = self.file.take().ok_or_else(|| mux("the file is gone".into()))?;
            let config = mp4::Mp4Config {
                major_brand: mp4::FourCC { value: *b"isom" },
                minor_version: 512,
                compatible_brands: [*b"isom", *b"iso2", *b"avc1", *b"mp41"]
                    .into_iter()
                    .map(|value| mp4::FourCC { value })
                    .collect(),
                // The track's own timescale: the movie's duration is then exact (no rounding of
                // each frame's duration to milliseconds).
                timescale: self.timescale,
            };
            let mut writer = mp4::Mp4Writer::write_start(file, &config).map_err(|e| mux(e.to_string()))?;
            let track = mp4::TrackConfig {
                track_type: mp4::TrackType::Video,
                timescale: self.timescale,
                language: "und".into(),
                media_conf: mp4::MediaConfig::AvcConfig(mp4::AvcConfig {
                    width: size_px[0] as u16,
                    height: size_px[1] as u16,
                    seq_param_set: sps,
                    pic_param_set: pps,
                }),
            };
            writer.add_track(&track).map_err(|e| mux(e.to_string()))?;
            self.mp4 = Some(writer);
        }
        let writer = self.mp4.as_mut().ok_or_else(|| mux("no MP4 writer".into()))?;
        let sample = mp4::Mp4Sample {
            start_time: frame as u64 * u64::from(self.ticks_per_frame),
            duration: self.ticks_per_frame,
            rendering_offset: 0,
            is_sync,
            bytes: bytes::Bytes::from(sample),
        };
        writer.write_sample(1, &sample).map_err(|e| mux(e.to_string()))?;
        Ok(())
    }
}

/// The NAL units of an Annex B byte stream (start codes `00 00 01` or `00 00 00 01` removed).
pub fn nal_units(stream: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i] == 0 && stream[i + 1] == 0 && stream[i + 2] == 1 {
            starts.push((i, i + 3));
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut units = Vec::with_capacity(starts.len());
    for (k, &(_, begin)) in starts.iter().enumerate() {
        let mut end = starts.get(k + 1).map_or(stream.len(), |&(at, _)| at);
        // A four-byte start code leaves one zero at the end of the unit before it.
        while end > begin && stream.get(end - 1) == Some(&0) && k + 1 < starts.len() {
            end -= 1;
        }
        if let Some(unit) = stream.get(begin..end) {
            units.push(unit);
        }
    }
    units
}

/// RGBA rows (sRGB values) to planar 4:2:0 YUV with BT.601 limited-range coefficients (the matrix
/// the stream's VUI names); chroma from the mean of each 2x2 block. `w` and `h` are even.
pub fn rgba_to_i420(rgba: &[u8], w: usize, h: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(w * h + 2 * (w / 2) * (h / 2), 0);
    let (y_plane, chroma) = out.split_at_mut(w * h);
    let (u_plane, v_plane) = chroma.split_at_mut((w / 2) * (h / 2));
    let luma = |r: f32, g: f32, b: f32| 16.0 + 0.256_79 * r + 0.504_13 * g + 0.097_91 * b;
    for (y_row, px_row) in y_plane.chunks_exact_mut(w).zip(rgba.chunks_exact(w * 4)) {
        for (y, px) in y_row.iter_mut().zip(px_row.chunks_exact(4)) {
            *y = luma(f32::from(px[0]), f32::from(px[1]), f32::from(px[2]))
                .round()
                .clamp(0.0, 255.0) as u8;
        }
    }
    let half = w / 2;
    for cy in 0..h / 2 {
        for cx in 0..half {
            let mut sum = [0.0f32; 3];
            for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let at = ((2 * cy + dy) * w + 2 * cx + dx) * 4;
                if let Some(px) = rgba.get(at..at + 3) {
                    for c in 0..3 {
                        sum[c] += f32::from(px[c]);
                    }
                }
            }
            let [r, g, b] = sum.map(|s| s / 4.0);
            let u = 128.0 - 0.148_22 * r - 0.290_99 * g + 0.439_21 * b;
            let v = 128.0 + 0.439_21 * r - 0.367_79 * g - 0.071_42 * b;
            if let (Some(pu), Some(pv)) = (u_plane.get_mut(cy * half + cx), v_plane.get_mut(cy * half + cx)) {
                *pu = u.round().clamp(0.0, 255.0) as u8;
                *pv = v.round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

/// sRGB value (0..255) to linear light, by table.
fn srgb_to_linear_table() -> [f32; 256] {
    let mut t = [0.0f32; 256];
    for (i, v) in t.iter_mut().enumerate() {
        let c = i as f32 / 255.0;
        *v = if c <= 0.040_45 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        };
    }
    t
}

fn linear_to_srgb_u8(l: f32) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let c = if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (c * 255.0).round().clamp(0.0, 255.0) as u8
}

/// Reduces an RGBA image of `size_px` (each side a multiple of `factor`) by `factor` with a box
/// filter: each output pixel is the mean of its `factor` x `factor` block, taken in linear light
/// and weighted by alpha (so edges against a transparent background keep their colour). Returns
/// `None` when the sizes do not fit. A factor of 1 returns the image as it is.
pub fn downsample_box(rgba: &[u8], size_px: [u32; 2], factor: u32) -> Option<(Vec<u8>, [u32; 2])> {
    let [w, h] = size_px.map(|s| s as usize);
    let f = factor as usize;
    if f == 0 || w % f != 0 || h % f != 0 || rgba.len() != w * h * 4 {
        return None;
    }
    if f == 1 {
        return Some((rgba.to_vec(), size_px));
    }
    let (ow, oh) = (w / f, h / f);
    let lut = srgb_to_linear_table();
    let mut out = vec![0u8; ow * oh * 4];
    let n = (f * f) as f32;
    for oy in 0..oh {
        for ox in 0..ow {
            let mut acc = [0.0f32; 4];
            for dy in 0..f {
                let row = (oy * f + dy) * w;
                for dx in 0..f {
                    let at = (row + ox * f + dx) * 4;
                    if let Some(px) = rgba.get(at..at + 4) {
                        let a = f32::from(px[3]) / 255.0;
                        for c in 0..3 {
                            acc[c] += lut[px[c] as usize] * a;
                        }
                        acc[3] += a;
                    }
                }
            }
            let at = (oy * ow + ox) * 4;
            if let Some(px) = out.get_mut(at..at + 4) {
                if acc[3] > 0.0 {
                    for c in 0..3 {
                        px[c] = linear_to_srgb_u8(acc[c] / acc[3]);
                    }
                }
                px[3] = (acc[3] / n * 255.0).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    Some((out, [ow as u32, oh as u32]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nal_units_split_on_three_and_four_byte_start_codes() {
        let stream = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 4, 5];
        let units = nal_units(&stream);
        assert_eq!(units, vec![&[0x67, 1, 2][..], &[0x68, 3][..], &[0x65, 4, 5][..]]);
    }

    #[test]
    fn the_box_filter_averages_in_linear_light() {
        // Black and white pixels in a 2x2 block: half the light, sRGB 188 (not 128).
        let img = [0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255];
        let (out, size) = downsample_box(&img, [2, 2], 2).unwrap();
        assert_eq!(size, [1, 1]);
        assert!((187..=189).contains(&out[0]), "{out:?}");
        assert_eq!(out[3], 255);
        // A red pixel beside three transparent ones keeps its colour at a quarter of the cover.
        let img = [255, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let (out, _) = downsample_box(&img, [2, 2], 2).unwrap();
        assert_eq!(&out[..3], &[255, 0, 0]);
        assert!((63..=65).contains(&out[3]));
        assert!(downsample_box(&img, [2, 2], 3).is_none());
    }

    #[test]
    fn grey_converts_to_the_limited_range_luma_of_bt601() {
        let img = [255u8; 4 * 4].to_vec();
        let mut yuv = Vec::new();
        rgba_to_i420(&img, 2, 2, &mut yuv);
        assert_eq!(yuv, vec![235, 235, 235, 235, 128, 128]);
    }
}
