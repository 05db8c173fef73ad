//! The parts of SentencePiece's `ModelProto` (proto2) that decide how text is encoded and
//! decoded, as prost messages. Field numbers are those of `sentencepiece_model.proto`; fields not
//! listed here are skipped on reading (training-only settings such as `input` or
//! `shrinking_factor`) and absent on writing.

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pub pieces: Vec<Piece>,
    #[prost(message, optional, tag = "2")]
    pub trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    pub normalizer_spec: Option<NormalizerSpec>,
    #[prost(message, optional, tag = "5")]
    pub denormalizer_spec: Option<NormalizerSpec>,
}

/// `ModelProto.SentencePiece`: the piece, its score, and its type
/// (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte; 1 when absent).
#[derive(Clone, PartialEq, Message)]
pub struct Piece {
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub score: Option<f32>,
    #[prost(int32, optional, tag = "3")]
    pub r#type: Option<i32>,
}

pub const NORMAL: i32 = 1;
pub const UNKNOWN: i32 = 2;
pub const CONTROL: i32 = 3;
pub const USER_DEFINED: i32 = 4;
pub const UNUSED: i32 = 5;
pub const BYTE: i32 = 6;

/// Model types of `TrainerSpec.model_type` (1 when absent).
pub const UNIGRAM: i32 = 1;
pub const BPE: i32 = 2;
pub const WORD: i32 = 3;
pub const CHAR: i32 = 4;

#[derive(Clone, PartialEq, Message)]
pub struct TrainerSpec {
    #[prost(int32, optional, tag = "3")]
    pub model_type: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub vocab_size: Option<i32>,
    #[prost(float, optional, tag = "10")]
    pub character_coverage: Option<f32>,
    #[prost(int32, optional, tag = "20")]
    pub max_sentencepiece_length: Option<i32>,
    #[prost(bool, optional, tag = "21")]
    pub split_by_unicode_script: Option<bool>,
    #[prost(bool, optional, tag = "22")]
    pub split_by_whitespace: Option<bool>,
    #[prost(bool, optional, tag = "23")]
    pub split_by_number: Option<bool>,
    #[prost(bool, optional, tag = "24")]
    pub treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "25")]
    pub split_digits: Option<bool>,
    #[prost(bool, optional, tag = "35")]
    pub byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40")]
    pub unk_id: Option<i32>,
    #[prost(int32, optional, tag = "41")]
    pub bos_id: Option<i32>,
    #[prost(int32, optional, tag = "42")]
    pub eos_id: Option<i32>,
    #[prost(int32, optional, tag = "43")]
    pub pad_id: Option<i32>,
    #[prost(string, optional, tag = "44")]
    pub unk_surface: Option<String>,
    #[prost(string, optional, tag = "45")]
    pub unk_piece: Option<String>,
    #[prost(string, optional, tag = "46")]
    pub bos_piece: Option<String>,
    #[prost(string, optional, tag = "47")]
    pub eos_piece: Option<String>,
    #[prost(string, optional, tag = "48")]
    pub pad_piece: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NormalizerSpec {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3")]
    pub add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4")]
    pub remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5")]
    pub escape_whitespaces: Option<bool>,
    #[prost(string, optional, tag = "6")]
    pub normalization_rule_tsv: Option<String>,
}

pub fn decode(bytes: &[u8]) -> Result<ModelProto, prost::DecodeError> {
    ModelProto::decode(bytes)
}

pub fn encode(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}
