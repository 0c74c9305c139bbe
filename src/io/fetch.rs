//! Entries of the Protein Data Bank by their ID (`1ubq`, `pdb:1ubq`, the extended `pdb_00001ubq`),
//! as ChimeraX's `open 1ubq` and PyMOL's `fetch 1ubq` give them: the entry's mmCIF file from RCSB
//! (`https://files.rcsb.org/download/1UBQ.cif.gz`), kept in a cache so that an entry is downloaded
//! once and opens without a network afterwards.
//!
//! Owns the ID rules ([`parse_pdb_id`]), where an entry comes from and where it is kept
//! ([`Source`]: `ORBITFIELD_PDB_URL`, a template with `{id}` or `{ID}`, names a mirror such as PDBe
//! or PDBj; `ORBITFIELD_CACHE_DIR`, else `$XDG_CACHE_HOME/orbitfield/pdb`, else
//! `~/.cache/orbitfield/pdb`), and the download ([`fetch_entry`]: blocking, written to a
//! temporary file and renamed, so a cancelled or failed download leaves nothing). The viewer runs it
//! on a thread of `jobs::fetch`; the command line calls it directly.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// RCSB's download address for an entry's mmCIF file.
pub const DEFAULT_URL: &str = "https://files.rcsb.org/download/{ID}.cif.gz";

/// The prefix that marks a file argument as a PDB entry (`orbitfield pdb:1ubq`).
pub const PREFIX: &str = "pdb:";

/// Why an entry could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "'{0}' is no PDB ID: give four characters, a digit then three letters or digits (1ubq), or pdb_ and eight (pdb_00001ubq)"
    )]
    BadId(String),
    #[error("the PDB has no entry {id} ({url} answered {status})")]
    NotFound { id: String, url: String, status: u16 },
    #[error("could not download PDB entry {id} from {url}: {why}")]
    Network { id: String, url: String, why: String },
    #[error("could not keep PDB entry {id} in {path}: {why}")]
    Cache { id: String, path: String, why: String },
    #[error("no folder to keep downloaded entries in: set ORBITFIELD_CACHE_DIR or HOME")]
    NoCache,
    #[error("the download of PDB entry {0} was cancelled")]
    Cancelled(String),
}

/// The canonical form of a PDB ID (lower case): four characters, the first a digit 1-9, or the
/// extended `pdb_` and eight characters; a leading `pdb:` is allowed.
pub fn parse_pdb_id(text: &str) -> Result<String, FetchError> {
    let lower = text.trim().to_ascii_lowercase();
    let t = lower.strip_prefix(PREFIX).unwrap_or(&lower).to_string();
    let short = |s: &str| {
        s.len() == 4
            && s.chars().next().is_some_and(|c| ('1'..='9').contains(&c))
            && s.chars().all(|c| c.is_ascii_alphanumeric())
    };
    let ok = short(&t)
        || t.strip_prefix("pdb_").is_some_and(|rest| {
            rest.len() == 8 && rest.chars().all(|c| c.is_ascii_alphanumeric()) && short(&rest[4..])
        });
    if ok {
        Ok(t)
    } else {
        Err(FetchError::BadId(text.trim().to_string()))
    }
}

/// Whether a command-line file argument names a PDB entry (`pdb:1ubq`) rather than a file.
pub fn is_entry_argument(arg: &str) -> bool {
    arg.len() > PREFIX.len() && arg.get(..PREFIX.len()).is_some_and(|p| p.eq_ignore_ascii_case(PREFIX))
}

/// Where entries come from and where they are kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// The download address with `{id}` (lower case) or `{ID}` (upper case) for the entry.
    pub url_template: String,
    /// The folder downloaded entries are kept in (`None`: nowhere is known).
    pub cache_dir: Option<PathBuf>,
}

impl Source {
    /// `ORBITFIELD_PDB_URL` (a template holding `{id}` or `{ID}`) else RCSB; `ORBITFIELD_CACHE_DIR`,
    /// else `$XDG_CACHE_HOME/orbitfield/pdb`, else `~/.cache/orbitfield/pdb`.
    pub fn from_environment() -> Source {
        let url_template = std::env::var("ORBITFIELD_PDB_URL")
            .ok()
            .filter(|t| t.contains("{id}") || t.contains("{ID}"))
            .unwrap_or_else(|| DEFAULT_URL.to_string());
        let cache_dir = match std::env::var_os("ORBITFIELD_CACHE_DIR").filter(|d| !d.is_empty()) {
            Some(d) => Some(PathBuf::from(d)),
            None => std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|d| d.join("orbitfield").join("pdb")),
        };
        Source {
            url_template,
            cache_dir,
        }
    }

    /// Where entry `id` is downloaded from.
    pub fn url(&self, id: &str) -> String {
        self.url_template
            .replace("{ID}", &id.to_ascii_uppercase())
            .replace("{id}", &id.to_ascii_lowercase())
    }

    /// Where entry `id` is kept once downloaded (named with the address's ending: `.cif.gz` from
    /// RCSB, a mirror's own otherwise, so the readers know the format).
    pub fn cache_path(&self, id: &str) -> Result<PathBuf, FetchError> {
        let dir = self.cache_dir.as_ref().ok_or(FetchError::NoCache)?;
        let url = self.url(id).to_ascii_lowercase();
        let ending = [".cif.gz", ".bcif.gz", ".bcif", ".cif", ".pdb.gz", ".pdb", ".ent.gz"]
            .into_iter()
            .find(|e| url.ends_with(e))
            .unwrap_or(".cif.gz");
        Ok(dir.join(format!("{id}{ending}")))
    }

    /// The host entries come from, for messages ("files.rcsb.org").
    pub fn host(&self) -> String {
        let rest = self.url_template.split("://").nth(1).unwrap_or(&self.url_template);
        rest.split('/').next().unwrap_or(rest).to_string()
    }
}

/// The file of entry `id`: from the cache, else downloaded into it. `received` counts the bytes
/// as they arrive (for a progress line), `total` holds the size when the server says it (0 when
/// not); `cancel` stops the download between reads. Returns the file and whether it was
/// downloaded now.
pub fn fetch_entry(
    source: &Source,
    id: &str,
    cancel: &AtomicBool,
    received: &AtomicU64,
    total: &AtomicU64,
) -> Result<(PathBuf, bool), FetchError> {
    let id = parse_pdb_id(id)?;
    let path = source.cache_path(&id)?;
    if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() > 0) {
        return Ok((path, false));
    }
    let url = source.url(&id);
    let network = |why: String| FetchError::Network {
        id: id.to_ascii_uppercase(),
        url: url.clone(),
        why,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(15)))
        .timeout_global(Some(Duration::from_secs(600)))
        .http_status_as_error(false)
        .user_agent(concat!("orbitfield/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response = agent.get(&url).call().map_err(|e| {
        network(format!(
            "{e} (is this computer online? the entry's file can also be opened from disk)"
        ))
    })?;
    let status = response.status().as_u16();
    if status == 404 || status == 410 {
        return Err(FetchError::NotFound {
            id: id.to_ascii_uppercase(),
            url,
            status,
        });
    }
    if !(200..300).contains(&status) {
        return Err(network(format!("the server answered {status}")));
    }
    if let Some(n) = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        total.store(n, Ordering::Relaxed);
    }
    let dir = path.parent().map(PathBuf::from).unwrap_or_default();
    let cache = |why: String| FetchError::Cache {
        id: id.to_ascii_uppercase(),
        path: dir.display().to_string(),
        why,
    };
    std::fs::create_dir_all(&dir).map_err(|e| cache(e.to_string()))?;
    let partial = Partial(dir.join(format!(".{id}.{}.partial", std::process::id())));
    let mut tmp = std::fs::File::create(&partial.0).map_err(|e| cache(e.to_string()))?;
    let mut reader = response.body_mut().as_reader();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(FetchError::Cancelled(id.to_ascii_uppercase()));
        }
        let n = reader.read(&mut buf).map_err(|e| network(e.to_string()))?;
        if n == 0 {
            break;
        }
        tmp.write_all(&buf[..n]).map_err(|e| cache(e.to_string()))?;
        received.fetch_add(n as u64, Ordering::Relaxed);
    }
    if received.load(Ordering::Relaxed) == 0 {
        return Err(network("the server sent an empty file".into()));
    }
    tmp.sync_all().map_err(|e| cache(e.to_string()))?;
    drop(tmp);
    std::fs::rename(&partial.0, &path).map_err(|e| cache(e.to_string()))?;
    Ok((path, true))
}

/// A download's temporary file, removed unless it was renamed into place.
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdb_ids_are_four_characters_or_extended() {
        assert_eq!(parse_pdb_id("1UBQ").unwrap(), "1ubq");
        assert_eq!(parse_pdb_id(" pdb:4e43 ").unwrap(), "4e43");
        assert_eq!(parse_pdb_id("PDB:4E43").unwrap(), "4e43");
        assert_eq!(parse_pdb_id("PDB_00001ubq").unwrap(), "pdb_00001ubq");
        for bad in ["ubq1", "0abc", "1ub", "1ubq2", "1u-q", "", "pdb_0001ubq", "adk.psf"] {
            assert!(matches!(parse_pdb_id(bad), Err(FetchError::BadId(_))), "{bad}");
        }
        assert!(is_entry_argument("pdb:1ubq") && is_entry_argument("PDB:1ubq"));
        assert!(!is_entry_argument("pdb:") && !is_entry_argument("1ubq.pdb"));
        // A name whose fourth byte falls inside a character is no entry (and no panic).
        assert!(!is_entry_argument("aéé.pdb"));
    }

    #[test]
    fn addresses_and_cache_names_follow_the_template() {
        let rcsb = Source {
            url_template: DEFAULT_URL.into(),
            cache_dir: Some(PathBuf::from("/c")),
        };
        assert_eq!(rcsb.url("1ubq"), "https://files.rcsb.org/download/1UBQ.cif.gz");
        assert_eq!(rcsb.cache_path("1ubq").unwrap(), PathBuf::from("/c/1ubq.cif.gz"));
        assert_eq!(rcsb.host(), "files.rcsb.org");
        let pdbe = Source {
            url_template: "https://www.ebi.ac.uk/pdbe/entry-files/download/{id}.bcif".into(),
            cache_dir: Some(PathBuf::from("/c")),
        };
        assert_eq!(
            pdbe.url("1UBQ"),
            "https://www.ebi.ac.uk/pdbe/entry-files/download/1ubq.bcif"
        );
        assert_eq!(pdbe.cache_path("1ubq").unwrap(), PathBuf::from("/c/1ubq.bcif"));
        let nowhere = Source {
            cache_dir: None,
            ..rcsb
        };
        assert!(matches!(nowhere.cache_path("1ubq"), Err(FetchError::NoCache)));
    }
}
