//! Gaussian basis sets: contracted shells, Cartesian and real solid-harmonic (pure) functions.
//!
//! Internal conventions (readers convert every file format to these; evaluators assume them):
//! - Centres in bohr; exponents in bohr^-2.
//! - `coefficients` multiply *normalised* primitives, and the contracted radial function is
//!   normalised to one (readers renormalise after reading).
//! - Cartesian functions within a shell are in Molden order (d: xx yy zz xy xz yz; f: xxx yyy zzz
//!   xyy xxy xxz xzz yzz yyz xyz; g: xxxx yyyy zzzz xxxy xxxz yyyx yyyz zzzx zzzy xxyy xxzz yyzz
//!   xxyz yyxz zzxy; h and up: alphabetical descending powers), and every Cartesian function is
//!   individually normalised.
//! - Pure functions are real solid harmonics in the order m = 0, +1, -1, +2, -2, ... (Molden,
//!   Gaussian), each normalised.

/// One contracted shell.
#[derive(Clone, Debug, PartialEq)]
pub struct Shell {
    /// Angular momentum (0 = s, 1 = p, ...).
    pub l: u8,
    /// Real solid harmonics (2l+1 functions) when true, Cartesian ((l+1)(l+2)/2) when false.
    pub pure: bool,
    /// Index of the atom the shell sits on.
    pub atom: usize,
    pub center_bohr: [f64; 3],
    pub exponents: Vec<f64>,
    /// Coefficients of normalised primitives, one per exponent.
    pub coefficients: Vec<f64>,
}

impl Shell {
    /// Number of basis functions this shell contributes.
    pub fn n_functions(&self) -> usize {
        let l = self.l as usize;
        if self.pure { 2 * l + 1 } else { (l + 1) * (l + 2) / 2 }
    }
}

/// An ordered list of shells; basis function indices run over shells in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BasisSet {
    pub shells: Vec<Shell>,
}

impl BasisSet {
    /// Total number of basis functions.
    pub fn n_functions(&self) -> usize {
        self.shells.iter().map(Shell::n_functions).sum()
    }

    /// Index of each shell's first basis function.
    pub fn shell_offsets(&self) -> Vec<usize> {
        let mut off = 0;
        self.shells
            .iter()
            .map(|s| {
                let o = off;
                off += s.n_functions();
                o
            })
            .collect()
    }

    /// Highest angular momentum present (0 for an empty basis).
    pub fn max_l(&self) -> u8 {
        self.shells.iter().map(|s| s.l).max().unwrap_or(0)
    }
}
