//! Page contents and compressors (temporary stand-in; replaced by the measured tables).
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compressor {
    #[default]
    Lzo,
    LzoRle,
    Lz4,
    Zstd,
    Deflate,
}

impl Compressor {
    pub fn name(self) -> &'static str {
        "lzo"
    }
    pub fn compress_ns(self, _contents: &Contents) -> u64 {
        8_000
    }
    pub fn decompress_ns(self, _contents: &Contents) -> u64 {
        2_500
    }
}

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Contents {
    #[default]
    Random,
    Half,
    Text,
    Zero,
    Sizes(Vec<(u32, u32)>),
}

impl Contents {
    pub fn is_zero(&self) -> bool {
        matches!(self, Contents::Zero)
    }
    pub fn validate(&self, _field: &str) -> Result<(), crate::error::ConfigError> {
        Ok(())
    }
}

pub fn compressed_len(_compressor: Compressor, contents: &Contents, key: u64) -> u32 {
    match contents {
        Contents::Random => 4096,
        Contents::Half => 2100,
        Contents::Text => 1500,
        Contents::Zero => 0,
        Contents::Sizes(v) => v[(key % v.len() as u64) as usize].0,
    }
}
