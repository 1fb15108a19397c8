//! Tests of the shared line syntax and the id hasher.

use super::syntax::is_ascii;
use super::*;

#[test]
fn times_parse_exactly() {
    assert_eq!(parse_time(b"2364.742742"), Ok(2_364_742_742_000));
    assert_eq!(parse_time(b"0.000000001"), Ok(1));
    assert_eq!(parse_time(b"1.5"), Ok(1_500_000_000));
    assert_eq!(parse_time(b"18446744073.709551615"), Ok(u64::MAX));
    assert_eq!(
        parse_time(b"18446744073.709551616"),
        Err("timestamp \"18446744073.709551616\" is too large".to_string())
    );
    assert_eq!(
        parse_time(b"1.0000000001"),
        Err("timestamp \"1.0000000001\" is not seconds.fraction".to_string())
    );
    assert!(parse_time(b"12").is_err());
    assert!(parse_time(b".5").is_err());
    assert!(parse_time(b"5.").is_err());
    assert!(parse_time(b"5.-1").is_err());
}

#[test]
fn columns_count_characters_not_bytes() {
    let line = "p\u{e9}\u{e9} 12".as_bytes();
    let digits = &line[6..];
    assert_eq!(offset_in(line, digits), 6);
    assert_eq!(column_of(line, offset_in(line, digits)), 5);
    assert_eq!(column_of(line, 0), 1);
    assert_eq!(column_of(line, line.len()), 7);
}

#[test]
fn numbers() {
    assert_eq!(parse_hex(b"ffffffffffffffff"), Some(u64::MAX));
    assert_eq!(parse_hex(b"10000000000000000"), None);
    assert_eq!(parse_hex(b"0000000000000000001"), Some(1));
    assert_eq!(parse_hex(b"x"), None);
    assert_eq!(parse_decimal(b"18446744073709551616"), None);
    assert_eq!(parse_pid(b"4194304", "pid"), Ok(4_194_304));
    assert_eq!(
        parse_pid(b"4194305", "pid"),
        Err("pid \"4194305\" exceeds the kernel's largest pid 4194304".into())
    );
    assert_eq!(parse_pid(b"12a", "tid"), Err("tid \"12a\" is not a decimal number".into()));
}

#[test]
fn ascii_check_sees_every_byte() {
    for len in 0..40 {
        let mut line = vec![b'a'; len];
        assert!(is_ascii(&line));
        for at in 0..len {
            line[at] = 0xc3;
            assert!(!is_ascii(&line), "{len} {at}");
            assert!(utf8_error(&line).is_some());
            line[at] = b'a';
        }
    }
}

#[test]
fn ids_hash_apart() {
    let hash = |n: u64| {
        let mut hasher = IdHasher::default();
        hasher.write_u64(n);
        hasher.finish()
    };
    assert_ne!(hash(1), hash(2));
    assert_ne!(hash(1 << 32), hash(1));
}
