//! Data shipped inside the binary: the demo (the ethylene torsion series, 37 Molden files from
//! PySCF, HF/6-31G*, H-C-C-H torsion 0..180 degrees in 5-degree steps).

/// One embedded file: a name and its bytes.
pub struct EmbeddedFile {
    pub name: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! demo_files {
    ($($n:literal),* $(,)?) => {
        &[$(EmbeddedFile {
            name: concat!("ethylene_twist_", $n, ".molden"),
            bytes: include_bytes!(concat!("../assets/demo/ethylene_twist_", $n, ".molden")),
        }),*]
    };
}

/// The demo series, in frame order.
pub static DEMO_SERIES: &[EmbeddedFile] = demo_files!(
    "000", "001", "002", "003", "004", "005", "006", "007", "008", "009", "010", "011", "012", "013", "014", "015",
    "016", "017", "018", "019", "020", "021", "022", "023", "024", "025", "026", "027", "028", "029", "030", "031",
    "032", "033", "034", "035", "036",
);
