use super::*;

#[test]
fn cartesian_orders_are_complete() {
    for l in 0..7u8 {
        let o = cartesian_order(l);
        assert_eq!(o.len(), (l as usize + 1) * (l as usize + 2) / 2);
        assert!(o.iter().all(|p| p[0] + p[1] + p[2] == l));
        let mut s = o.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), o.len());
    }
}

#[test]
fn pure_positions() {
    assert_eq!(pure_index(2, 0), Some(0));
    assert_eq!(pure_index(2, 1), Some(1));
    assert_eq!(pure_index(2, -1), Some(2));
    assert_eq!(pure_index(3, -3), Some(6));
    assert_eq!(pure_index(2, 3), None);
}

#[test]
fn single_primitive_normalises_to_its_coefficient_sign() {
    let c = normalised_contraction(2, &[0.8], &[0.3]).unwrap_or_default();
    assert!((c[0] - 1.0).abs() < 1e-14);
}

#[test]
fn run_together_fields_are_split_by_width() {
    let mut v = Vec::new();
    let label = row_values(b"   1 1   C  1S   -100.12345-200.12345", 10, 2, &mut v);
    assert_eq!(label, Some(&b"   1 1   C  1S   "[..]));
    assert_eq!(v, vec![-100.12345, -200.12345]);
    v.clear();
    assert_eq!(row_values(b"   1 1   C  1S   1.0 abc", 10, 2, &mut v), None);
    assert!(v.is_empty());
    assert_eq!(
        row_values(b"  0C   1s  1.5    2.5", 10, 2, &mut v),
        Some(&b"  0C   1s  "[..])
    );
}

#[test]
fn decimals_parse_like_std() {
    for s in [
        "-0.701483",
        "0.000000",
        "-0.000000",
        "12.5",
        "+3.25",
        "7",
        "1234567.12345678",
        "-1.5D-01",
        "1e3",
    ] {
        let want = s.replace('D', "E").parse::<f64>().ok();
        assert_eq!(decimal(s.as_bytes()), want, "{s}");
    }
    assert_eq!(decimal(b"  "), None);
    assert_eq!(decimal(b"-"), None);
    assert_eq!(decimal(b"1.2.3"), None);
    assert_eq!(decimal(b"**********"), None);
}

#[test]
fn lines_are_numbered() {
    let mut l = Lines::new(b"a\r\nbb\n\nccc");
    assert_eq!(l.next_line(), Some(&b"a"[..]));
    l.next_line();
    assert_eq!(l.next_line(), Some(&b""[..]));
    assert_eq!(l.next_line(), Some(&b"ccc"[..]));
    assert_eq!(l.line_no(), 4);
    assert_eq!(l.next_line(), None);
}

#[test]
fn gaussian_eigenvalues_are_split_by_width() {
    let v = gaussian::eigenvalues(b"Alpha  occ. eigenvalues -- -100.20301-100.20250 -10.00812").unwrap_or_default();
    assert_eq!(v, vec![-100.20301, -100.20250, -10.00812]);
    let v = gaussian::eigenvalues(b"Beta virt. eigenvalues --    0.58519").unwrap_or_default();
    assert_eq!(v, vec![0.58519]);
    assert_eq!(gaussian::eigenvalues(b"Alpha  occ. eigenvalues -- **********"), None);
}
