//! The library's one stable sort (`lockstep::sort`), which the page's code uses in place of the
//! standard library's generic sorts, against the standard library's stable sort.

use lockstep::sorted as sort;

use crate::Draw;

/// Lists of every length up to 64 and some long ones, with many equal keys, sorted by a key
/// that leaves ties: the order matches `sort_by_key` exactly, ties included.
#[test]
fn the_one_sort_orders_as_the_standard_stable_sort_does() {
    for case in 0..3_000u64 {
        let mut d = Draw(case);
        let len = if case % 100 == 0 {
            5_000
        } else {
            (case % 65) as usize
        };
        let spread = 1 + d.below(12);
        let items: Vec<(u64, usize)> = (0..len).map(|i| (d.below(spread), i)).collect();
        let mut expected = items.clone();
        expected.sort_by_key(|&(k, _)| k);
        let mut by_key = items.clone();
        sort::sort_by_key(&mut by_key, |&(k, _)| k);
        assert_eq!(by_key, expected, "case {case}: by key");
        let mut by = items.clone();
        sort::sort_by(&mut by, |a, b| a.0.cmp(&b.0));
        assert_eq!(by, expected, "case {case}: by comparison");
        // The whole value: the natural order, which equal keys' positions then decide.
        let mut all = items.clone();
        all.reverse();
        sort::sort(&mut all);
        let mut natural = items;
        natural.sort();
        assert_eq!(all, natural, "case {case}: natural order");
    }
}

/// Values that own memory are moved, never copied or dropped twice.
#[test]
fn the_one_sort_moves_owned_values_into_place() {
    let mut words: Vec<String> = "the rule one order carried by a token every participant checks"
        .split(' ')
        .map(String::from)
        .collect();
    sort::sort_by_key(&mut words, |w| w.len());
    assert_eq!(
        words.join(" "),
        "a by the one rule order token every checks carried participant"
    );
}
