//! The scenario-file form of a device: a preset name plus optional overrides.
//!
//! This is the shape users write (`preset = "nvme"`, `read_base_us = 10.0`). Parsing checks
//! only the shape and rejects unknown keys; [`DeviceConfig::resolve`] turns it into a
//! checked [`DeviceProfile`]. This module holds no numbers of its own: every default comes
//! from a preset in `profile`.

use serde::{Deserialize, Serialize};
use swapsim_core::{BlockDevice, ConfigError, SimRng};

use crate::profile::{invalid, DeviceProfile, PRESETS};

/// A device as written in a scenario file: a preset plus overrides, one per
/// [`DeviceProfile`] field. Each override, when present, replaces the preset's value;
/// see [`DeviceProfile`] for units and ranges.
///
/// ```toml
/// preset = "hdd"          # default "virtio"
/// seek_span_gib = 466     # a 500 GB disk
/// jitter_cv = 0.0         # deterministic
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    /// One of [`PRESETS`]. Default `"virtio"`, the measured validation machine.
    pub preset: String,
    /// Overrides [`DeviceProfile::name`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Overrides [`DeviceProfile::rotational`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// Overrides [`DeviceProfile::synchronous`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronous: Option<bool>,
    /// Overrides [`DeviceProfile::queue_depth`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// Overrides [`DeviceProfile::max_sectors_kb`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sectors_kb: Option<u32>,
    /// Overrides [`DeviceProfile::channels`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    /// Overrides [`DeviceProfile::read_base_us`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_base_us: Option<f64>,
    /// Overrides [`DeviceProfile::read_us_per_kib`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_us_per_kib: Option<f64>,
    /// Overrides [`DeviceProfile::write_base_us`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_base_us: Option<f64>,
    /// Overrides [`DeviceProfile::write_us_per_kib`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_us_per_kib: Option<f64>,
    /// Overrides [`DeviceProfile::bandwidth_mib_s`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_mib_s: Option<f64>,
    /// Overrides [`DeviceProfile::write_bandwidth_mib_s`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_bandwidth_mib_s: Option<f64>,
    /// Overrides [`DeviceProfile::pass_signal_us`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_signal_us: Option<f64>,
    /// Overrides [`DeviceProfile::jitter_cv`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_cv: Option<f64>,
    /// Overrides [`DeviceProfile::seek_us_full_stroke`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seek_us_full_stroke: Option<f64>,
    /// Overrides [`DeviceProfile::rotation_us`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation_us: Option<f64>,
    /// Overrides [`DeviceProfile::seek_span_gib`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seek_span_gib: Option<u64>,
    /// Overrides [`DeviceProfile::source`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Default for DeviceConfig {
    /// The `virtio` preset without overrides.
    fn default() -> DeviceConfig {
        DeviceConfig::preset("virtio")
    }
}

impl DeviceConfig {
    /// The preset called `name` without overrides. The name is checked by [`resolve`].
    ///
    /// [`resolve`]: DeviceConfig::resolve
    pub fn preset(name: &str) -> DeviceConfig {
        DeviceConfig {
            preset: name.to_string(),
            name: None,
            rotational: None,
            synchronous: None,
            queue_depth: None,
            max_sectors_kb: None,
            channels: None,
            read_base_us: None,
            read_us_per_kib: None,
            write_base_us: None,
            write_us_per_kib: None,
            bandwidth_mib_s: None,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: None,
            seek_us_full_stroke: None,
            rotation_us: None,
            seek_span_gib: None,
            source: None,
        }
    }

    /// Looks up the preset, applies the overrides and validates the result.
    pub fn resolve(&self) -> Result<DeviceProfile, ConfigError> {
        let Some(mut profile) = DeviceProfile::by_name(&self.preset) else {
            return Err(invalid(
                "preset",
                format!("unknown device preset \"{}\" (expected one of {})", self.preset, PRESETS.join(", ")),
            ));
        };
        macro_rules! apply {
            ($($field:ident),* $(,)?) => {
                $(if let Some(value) = &self.$field {
                    profile.$field = value.clone();
                })*
            };
        }
        apply!(
            name,
            rotational,
            synchronous,
            queue_depth,
            max_sectors_kb,
            channels,
            read_base_us,
            read_us_per_kib,
            write_base_us,
            write_us_per_kib,
            bandwidth_mib_s,
            jitter_cv,
            seek_us_full_stroke,
            rotation_us,
            seek_span_gib,
            source,
        );
        if let Some(w) = self.write_bandwidth_mib_s {
            profile.write_bandwidth_mib_s = Some(w);
        }
        if let Some(signal) = self.pass_signal_us {
            profile.pass_signal_us = Some(signal);
        }
        profile.validate()?;
        Ok(profile)
    }

    /// Resolves the configuration and builds its latency model, drawing jitter from `rng`
    /// (the stream the engine derived for this device).
    pub fn build(&self, rng: SimRng) -> Result<Box<dyn BlockDevice>, ConfigError> {
        self.resolve()?.build(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Parses `text` as TOML, resolves it and renders either the error or the fields that
    /// differ from the preset's.
    fn check(text: &str, expect: Expect) {
        let actual = match toml::from_str::<DeviceConfig>(text) {
            Err(err) => format!("parse error: {}", err.message()),
            Ok(cfg) => match cfg.resolve() {
                Err(err) => format!("invalid: {err}"),
                Ok(profile) => {
                    let preset = DeviceProfile::by_name(&cfg.preset).expect("resolve succeeded");
                    let resolved = toml::Table::try_from(&profile).expect("a profile serialises");
                    let base = toml::Table::try_from(&preset).expect("a profile serialises");
                    let mut lines = vec![format!("preset {}", cfg.preset)];
                    for (key, value) in &resolved {
                        if base.get(key) != Some(value) {
                            lines.push(format!("{key} = {value}"));
                        }
                    }
                    lines.join("\n")
                }
            },
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn empty_table_is_virtio() {
        check("", expect!["preset virtio"]);
        assert_eq!(DeviceConfig::default().resolve(), Ok(DeviceProfile::virtio()));
    }

    #[test]
    fn overrides_replace_preset_values() {
        check(
            r#"
            preset = "hdd"
            seek_span_gib = 466
            jitter_cv = 0.0
            "#,
            expect![[r#"
                preset hdd
                jitter_cv = 0.0
                seek_span_gib = 466"#]],
        );
    }

    #[test]
    fn unknown_preset() {
        check(
            r#"preset = "ssd""#,
            expect![[
                r#"invalid: preset: unknown device preset "ssd" (expected one of nvme, virtio, this-vm, san, hdd, disk-100mbs, zram, this-vm-zram)"#
            ]],
        );
    }

    #[test]
    fn misspelled_override_key() {
        check(
            r#"
            preset = "nvme"
            read_base_usec = 10.0
            "#,
            expect![[
                r#"parse error: unknown field `read_base_usec`, expected one of `preset`, `name`, `rotational`, `synchronous`, `queue_depth`, `max_sectors_kb`, `channels`, `read_base_us`, `read_us_per_kib`, `write_base_us`, `write_us_per_kib`, `bandwidth_mib_s`, `write_bandwidth_mib_s`, `pass_signal_us`, `jitter_cv`, `seek_us_full_stroke`, `rotation_us`, `seek_span_gib`, `source`"#
            ]],
        );
    }

    #[test]
    fn misspelled_key_inside_an_enclosing_table() {
        // The shape the cli uses: the device is a table inside the scenario.
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Scenario {
            #[allow(dead_code)]
            device: DeviceConfig,
        }
        let err = toml::from_str::<Scenario>("[device]\npreset = \"san\"\nchanels = 4\n")
            .expect_err("misspelled key must be rejected");
        assert!(err.message().starts_with("unknown field `chanels`"), "{err}");
    }

    #[test]
    fn override_out_of_range() {
        check("queue_depth = 0", expect!["invalid: queue_depth: 0 is below 1"]);
        check("read_base_us = -3", expect!["invalid: read_base_us: -3 is below 0"]);
        check("read_base_us = -3.0", expect!["invalid: read_base_us: -3 is below 0"]);
    }

    #[test]
    fn only_overrides_are_serialised() {
        let mut cfg = DeviceConfig::preset("zram");
        cfg.channels = Some(4);
        let text = toml::to_string(&cfg).expect("a config serialises");
        expect![[r#"
            preset = "zram"
            channels = 4
        "#]]
        .assert_eq(&text);
        assert_eq!(toml::from_str::<DeviceConfig>(&text).expect("round trip"), cfg);
    }

    #[test]
    fn build_reports_the_resolved_traits() {
        let mut cfg = DeviceConfig::preset("zram");
        cfg.queue_depth = Some(7);
        let device = cfg.build(SimRng::derive(1, "devices.swap0")).expect("valid config");
        assert_eq!(device.kind(), "zram");
        let traits = device.traits();
        assert!(traits.synchronous && !traits.rotational);
        assert_eq!(traits.queue_depth, 7);
        assert!(DeviceConfig::preset("tape").build(SimRng::derive(1, "devices.swap0")).is_err());
    }
}
