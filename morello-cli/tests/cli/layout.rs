//! End-to-end tests of `morello layout`.

use crate::common::morello;

fn json(args: &[&str]) -> serde_json::Value {
    let (code, stdout, stderr) = morello(args);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).expect("valid JSON")
}

#[test]
fn seed_004_packed_example() {
    let v = json(&["layout", "6x8", "[1, 0, 1 p(4)]", "--json"]);
    assert_eq!(v["expr"], "d0 * 4 + (d1 floordiv 4) * 24 + d1 mod 4");
    assert_eq!(v["buffer_elements"], 48);
    let offsets: Vec<u64> = serde_json::from_value(v["offsets"].clone()).unwrap();
    let expected: Vec<u64> =
        (0..6u64).flat_map(|i| (0..8u64).map(move |j| j % 4 + 4 * i + 24 * (j / 4))).collect();
    assert_eq!(offsets, expected);
}

#[test]
fn row_major_by_name() {
    let v = json(&["layout", "6x8", "row-major", "--json"]);
    assert_eq!(v["expr"], "d0 * 8 + d1");
    let (code, stdout, _) = morello(&["layout", "6x8", "col-major"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("buffer index:    d0 + d1 * 6"), "{stdout}");
}

/// A physical dim for the oracle: (logical dim, 'd'ynamic / 'p'acked / 'o'dd-even, size).
type OracleDim = (usize, char, u64);

/// An independent oracle: number the physical coordinates in buffer order.
fn oracle(dims: &[OracleDim], shape: &[u64]) -> Vec<u64> {
    let sizes: Vec<u64> = dims
        .iter()
        .map(|&(l, kind, n)| {
            if kind == 'd' {
                let packed: u64 = dims.iter().filter(|d| d.0 == l && d.1 != 'd').map(|d| d.2).product();
                shape[l] / packed
            } else {
                n
            }
        })
        .collect();
    let volume: u64 = shape.iter().product();
    let mut out = vec![0; volume as usize];
    for offset in 0..volume {
        let mut rest = offset;
        let mut coords = vec![0; dims.len()];
        for j in (0..dims.len()).rev() {
            coords[j] = rest % sizes[j];
            rest /= sizes[j];
        }
        let mut point = vec![0u64; shape.len()];
        for (j, &(l, kind, n)) in dims.iter().enumerate() {
            let inner: u64 = (j + 1..dims.len()).filter(|&k| dims[k].0 == l).map(|k| sizes[k]).product();
            let digit = if kind == 'o' {
                if coords[j] < n / 2 { 2 * coords[j] } else { 2 * (coords[j] - n / 2) + 1 }
            } else {
                coords[j]
            };
            point[l] += digit * inner;
        }
        let linear = point.iter().zip(shape).fold(0, |acc, (&p, &s)| acc * s + p);
        out[linear as usize] = offset;
    }
    out
}

#[test]
fn agrees_with_an_independent_oracle() {
    let cases: &[(&str, &[u64], &[OracleDim])] = &[
        ("[0, 1, 0 p(4), 1 oe(16)]", &[8, 32], &[(0, 'd', 0), (1, 'd', 0), (0, 'p', 4), (1, 'o', 16)]),
        (
            "[1, 0, 1 p(2), 0 p(3), 1 p(2)]",
            &[6, 12],
            &[(1, 'd', 0), (0, 'd', 0), (1, 'p', 2), (0, 'p', 3), (1, 'p', 2)],
        ),
        ("[0 oe(4), 1, 0 p(2)]", &[8, 3], &[(0, 'o', 4), (1, 'd', 0), (0, 'p', 2)]),
        ("[2, 0, 1, 2 oe(6)]", &[2, 3, 12], &[(2, 'd', 0), (0, 'd', 0), (1, 'd', 0), (2, 'o', 6)]),
    ];
    for (layout, shape, dims) in cases {
        let shape_text: Vec<String> = shape.iter().map(u64::to_string).collect();
        let v = json(&["layout", &shape_text.join("x"), layout, "--json"]);
        let offsets: Vec<u64> = serde_json::from_value(v["offsets"].clone()).unwrap();
        assert_eq!(offsets, oracle(dims, shape), "{layout}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let cases = [
        (vec!["layout", "6x0", "row-major"], "invalid shape `6x0`: dimension 1 is zero"),
        (
            vec!["layout", "6xq", "row-major"],
            "invalid shape `6xq`: dimension 1 (`q`) is not a positive integer",
        ),
        (vec!["layout", "4294967296x4294967296", "row-major"], "above the limit of 2^31"),
        (vec!["layout", "2147483648x2147483648x2147483648", "row-major"], "more than 2^63 - 1 elements"),
        (vec!["layout", "6x8", "[0, 1"], "invalid layout `[0, 1`: expected `,` or `]` at column 6"),
        (vec!["layout", "6x8", "[0, 2]"], "names logical dimension 2, but the shape has rank 2"),
        (vec!["layout", "6x8", "[0, 1, 1 oe(3)]"], "odd size 3"),
        (vec!["layout", "6x8", "[0, 1]", "--tile", "6x3x1"], "different rank"),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = morello(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn help_explains_every_argument() {
    let (code, stdout, _) = morello(&["layout", "--help"]);
    assert_eq!(code, 0);
    for needle in ["<SHAPE>", "<LAYOUT>", "--json", "--tile", "Examples:", "p(N)", "oe(N)"] {
        assert!(stdout.contains(needle), "{needle} missing from help");
    }
    let (code, stdout, _) = morello(&["--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("layout"));
}
