//! `--set key=value`: edits to a scenario's TOML tree before it is deserialised.
//!
//! An edit names a dotted path (`memcg.limit`, `swap.devices.0.model.preset`): table keys,
//! and decimal indices into arrays. Missing tables on the way are created, so a scenario
//! without a `[memcg]` section can still be given a limit. Whether a key exists at all is
//! decided by the scenario types themselves: the caller deserialises after every edit and
//! their `deny_unknown_fields` rejects a misspelled key, so this module holds no list of
//! valid keys that could drift from the real ones.

use toml::{Table, Value};

/// One parsed `--set` argument.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Override {
    /// The argument as typed, for error messages.
    pub(crate) text: String,
    path: Vec<String>,
    value: Value,
}

impl Override {
    /// Splits `key=value`. The value is read as a TOML value when it is one (`0`, `true`,
    /// `1.5`, `"quoted"`, `{ preset = "nvme" }`) and as a plain string otherwise
    /// (`128MiB`, `fixed`).
    pub(crate) fn parse(text: &str) -> Result<Override, String> {
        let Some((key, raw_value)) = text.split_once('=') else {
            return Err(format!("--set {text}: expected KEY=VALUE"));
        };
        let key = key.trim();
        let path: Vec<String> = key.split('.').map(|part| part.trim().to_string()).collect();
        if path.iter().any(|part| part.is_empty()) {
            return Err(format!("--set {text}: \"{key}\" is not a dotted key path"));
        }
        Ok(Override { text: text.to_string(), path, value: parse_value(raw_value.trim()) })
    }

    /// The dotted key, as it will be written back.
    pub(crate) fn key(&self) -> String {
        self.path.join(".")
    }

    /// The value the edit writes.
    pub(crate) fn value(&self) -> &Value {
        &self.value
    }

    /// Writes the value into `root`, creating missing tables along the path.
    pub(crate) fn apply(&self, root: &mut Table) -> Result<(), String> {
        let fail = |message: String| Err(format!("--set {}: {message}", self.text));
        let (last, parents) = self.path.split_last().expect("parse rejects an empty path");
        let mut current = Slot::Table(root);
        for (depth, part) in parents.iter().enumerate() {
            let here = self.path[..=depth].join(".");
            current = match current {
                Slot::Table(table) => {
                    let entry = table.entry(part.clone()).or_insert_with(|| Value::Table(Table::new()));
                    match entry {
                        Value::Table(inner) => Slot::Table(inner),
                        Value::Array(items) => Slot::Array(items),
                        other => return fail(not_a_table(&here, other)),
                    }
                }
                Slot::Array(items) => {
                    let n_items = items.len();
                    let Some(item) = index(part).and_then(|idx| items.get_mut(idx)) else {
                        let parent = self.path[..depth].join(".");
                        return fail(format!("{parent} has no element {part} (it has {n_items})"));
                    };
                    match item {
                        Value::Table(inner) => Slot::Table(inner),
                        Value::Array(inner) => Slot::Array(inner),
                        other => return fail(not_a_table(&here, other)),
                    }
                }
            };
        }
        match current {
            Slot::Table(table) => {
                table.insert(last.clone(), self.value.clone());
            }
            Slot::Array(items) => {
                let n_items = items.len();
                let Some(item) = index(last).and_then(|idx| items.get_mut(idx)) else {
                    let parent = parents.join(".");
                    return fail(format!("{parent} has no element {last} (it has {n_items})"));
                };
                *item = self.value.clone();
            }
        }
        Ok(())
    }
}

/// Where a path walk stands: in a table or in an array.
enum Slot<'a> {
    Table(&'a mut Table),
    Array(&'a mut Vec<Value>),
}

fn not_a_table(path: &str, value: &Value) -> String {
    format!("{path} is not a table (it holds a value of type {})", value.type_str())
}

fn index(part: &str) -> Option<usize> {
    if part.bytes().all(|b| b.is_ascii_digit()) {
        part.parse().ok()
    } else {
        None
    }
}

fn parse_value(raw: &str) -> Value {
    let document = format!("value = {raw}");
    match document.parse::<Table>() {
        Ok(mut table) => table.remove("value").expect("the document has exactly this key"),
        Err(_) => Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Applies each edit in turn to `base` and renders the resulting TOML or the error.
    fn check(base: &str, edits: &[&str], expect: Expect) {
        let mut root: Table = base.parse().expect("test input is valid TOML");
        let mut actual = String::new();
        for edit in edits {
            if let Err(message) = Override::parse(edit).and_then(|o| o.apply(&mut root)) {
                actual = format!("error: {message}");
                break;
            }
        }
        if actual.is_empty() {
            actual = toml::to_string(&root).expect("a table serialises");
        }
        expect.assert_eq(&actual);
    }

    #[test]
    fn scalars_are_typed_and_words_are_strings() {
        check(
            "[swap]\npage_cluster = 3\n",
            &[
                "swap.page_cluster=0",
                "swap.readahead=fixed",
                "memcg.limit=128MiB",
                "swap.vma_ra_enabled=false",
            ],
            expect![[r#"
                [memcg]
                limit = "128MiB"

                [swap]
                page_cluster = 0
                readahead = "fixed"
                vma_ra_enabled = false
            "#]],
        );
    }

    #[test]
    fn indices_reach_into_arrays_of_tables() {
        check(
            "[[swap.devices]]\nname = \"vda\"\nsize = \"1GiB\"\n",
            &["swap.devices.0.model.preset=nvme", "swap.devices.0.priority=5"],
            expect![[r#"
                [[swap.devices]]
                name = "vda"
                priority = 5
                size = "1GiB"

                [swap.devices.model]
                preset = "nvme"
            "#]],
        );
    }

    #[test]
    fn bad_paths_are_errors() {
        check(
            "[[swap.devices]]\nname = \"vda\"\n",
            &["swap.devices.1.name=vdb"],
            expect!["error: --set swap.devices.1.name=vdb: swap.devices has no element 1 (it has 1)"],
        );
        check(
            "seed = 1\n",
            &["seed.x=2"],
            expect!["error: --set seed.x=2: seed is not a table (it holds a value of type integer)"],
        );
        check(
            "",
            &["memcg..limit=1"],
            expect![[r#"error: --set memcg..limit=1: "memcg..limit" is not a dotted key path"#]],
        );
        check("", &["memcg.limit"], expect!["error: --set memcg.limit: expected KEY=VALUE"]);
    }
}
