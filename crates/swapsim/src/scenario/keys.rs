//! Which key a TOML error is about.
//!
//! The section types reject a bad value (a size with an unknown unit, a string where a
//! number belongs) while serde walks the file, and the toml crate then knows the line and
//! column of the value but not the dotted key that leads to it. This module reads the same
//! text once more into a tree that keeps every value's place, and names the key whose
//! value holds the error's place, e.g. `memcg.limit` or `swap.devices[0].size`, the way
//! validation errors name fields.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::ops::Range;

/// The toml crate hands a value's place to a struct of this name and fields, the protocol
/// behind `toml::Spanned`. `toml::Spanned` itself cannot be used here: a table that exists
/// only as the parent of a `[a.b]` header has no place, and the toml crate then hands it
/// over as a plain table, which `toml::Spanned` rejects. The tests below pin the protocol.
const SPANNED: &str = "$__serde_spanned_private_Spanned";
const SPAN_START: &str = "$__serde_spanned_private_start";
const SPAN_END: &str = "$__serde_spanned_private_end";
const SPAN_VALUE: &str = "$__serde_spanned_private_value";

/// A date or time arrives as a one-entry map under a key with this prefix.
const TOML_PRIVATE: &str = "$__toml_private";

/// A TOML value and where it was written, when the toml crate knows.
struct Located {
    span: Option<Range<usize>>,
    node: Node,
}

/// A TOML value that remembers where each of its children was written.
enum Node {
    Table(Vec<(String, Located)>),
    Array(Vec<Located>),
    Leaf,
}

/// The dotted key of the value `text` holds at `span`, when it is a value of a key (not a
/// key or a table header); `None` when the text does not parse or no value is there.
pub(super) fn key_at(text: &str, span: Range<usize>) -> Option<String> {
    let root: Located = toml::from_str(text).ok()?;
    let mut key = String::new();
    find(&root.node, &span, &mut key).then_some(key)
}

/// The line and column (both from 1) of the value of the dotted `key` (`swap.readahead`,
/// `timeline[2].readahead`) in `text`, when the text parses and holds it.
pub(super) fn place_of(text: &str, key: &str) -> Option<(usize, usize)> {
    let root: Located = toml::from_str(text).ok()?;
    let mut node = &root;
    for part in key.split('.') {
        let (name, indices) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        let Node::Table(entries) = &node.node else { return None };
        node = &entries.iter().find(|(entry, _)| entry == name)?.1;
        for index in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            let Node::Array(items) = &node.node else { return None };
            node = items.get(index.parse::<usize>().ok()?)?;
        }
    }
    let start = node.span.as_ref()?.start;
    let before = text.get(..start)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(start, |newline| start - newline - 1) + 1;
    Some((line, column))
}

/// Appends to `key` the path from `node` down to the leaf whose span contains `span`.
fn find(node: &Node, span: &Range<usize>, key: &mut String) -> bool {
    let length = key.len();
    let search = |key: &mut String, child: &Located| -> bool {
        // A table written under a `[header]` spans only its header, so tables are searched
        // whatever their span; a leaf must contain the error's place.
        let found = match &child.node {
            Node::Leaf => {
                child.span.as_ref().is_some_and(|place| place.start <= span.start && span.end <= place.end)
            }
            inner => find(inner, span, key),
        };
        if !found {
            key.truncate(length);
        }
        found
    };
    match node {
        Node::Leaf => false,
        Node::Table(entries) => entries.iter().any(|(name, child)| {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(name);
            search(key, child)
        }),
        Node::Array(items) => items.iter().enumerate().any(|(index, child)| {
            key.push_str(&format!("[{index}]"));
            search(key, child)
        }),
    }
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Located, D::Error> {
        deserializer.deserialize_struct(SPANNED, &[SPAN_START, SPAN_END, SPAN_VALUE], LocatedVisitor)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        Ok(deserializer.deserialize_any(LocatedVisitor)?.node)
    }
}

/// Reads a value with its place, or, when the toml crate has no place for it, the value
/// alone.
struct LocatedVisitor;

impl LocatedVisitor {
    fn unplaced<E>(node: Node) -> Result<Located, E> {
        Ok(Located { span: None, node })
    }
}

impl<'de> Visitor<'de> for LocatedVisitor {
    type Value = Located;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Located, E> {
        Self::unplaced(Node::Leaf)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Located, E> {
        Self::unplaced(Node::Leaf)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Located, E> {
        Self::unplaced(Node::Leaf)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Located, E> {
        Self::unplaced(Node::Leaf)
    }
    fn visit_str<E>(self, _: &str) -> Result<Located, E> {
        Self::unplaced(Node::Leaf)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Located, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Self::unplaced(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Located, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Self::unplaced(Node::Table(Vec::new()));
        };
        if first == SPAN_START {
            let start: usize = map.next_value()?;
            let mut end = start;
            let mut node = Node::Leaf;
            while let Some(field) = map.next_key::<String>()? {
                if field == SPAN_END {
                    end = map.next_value()?;
                } else if field == SPAN_VALUE {
                    // The value itself, read as a plain value: asking for its place again
                    // would be answered with the same place, without end.
                    node = map.next_value::<Node>()?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            return Ok(Located { span: Some(start..end), node });
        }
        if first.starts_with(TOML_PRIVATE) {
            map.next_value::<IgnoredAny>()?;
            return Self::unplaced(Node::Leaf);
        }
        let mut entries = vec![(first, map.next_value()?)];
        while let Some(name) = map.next_key::<String>()? {
            entries.push((name, map.next_value()?));
        }
        Self::unplaced(Node::Table(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of the value that starts where `needle` does in `text`.
    fn key_of(text: &str, needle: &str) -> Option<String> {
        let start = text.find(needle).expect("the needle is in the text");
        key_at(text, start..start + needle.len())
    }

    #[test]
    fn names_keys_in_tables_arrays_and_inline_tables() {
        let text = r#"
seed = 3
[memcg]
limit = "12 parsecs"
[[swap.devices]]
name = "a"
size = "1GiB"
[[swap.devices]]
name = "b"
size = "2 furlongs"
model = { preset = "nvme", channels = "x" }
[workload]
list = [1, [2, "deep"]]
when = 1979-05-27
"#;
        assert_eq!(key_of(text, "3").as_deref(), Some("seed"));
        assert_eq!(key_of(text, "\"12 parsecs\"").as_deref(), Some("memcg.limit"));
        assert_eq!(key_of(text, "\"2 furlongs\"").as_deref(), Some("swap.devices[1].size"));
        assert_eq!(key_of(text, "\"x\"").as_deref(), Some("swap.devices[1].model.channels"));
        assert_eq!(key_of(text, "\"deep\"").as_deref(), Some("workload.list[1][1]"));
        assert_eq!(key_of(text, "1979-05-27").as_deref(), Some("workload.when"));
        assert_eq!(key_of(text, "[memcg]"), None);
        assert_eq!(key_at("not = toml = at all", 0..3), None);
        assert_eq!(place_of(text, "memcg.limit"), Some((4, 9)));
        assert_eq!(place_of(text, "swap.devices[1].model.preset"), Some((11, 20)));
        assert_eq!(place_of(text, "swap.devices[2].size"), None);
        assert_eq!(place_of(text, "memcg.swappiness"), None);
    }
}
