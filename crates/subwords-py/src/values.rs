//! Python values into the core's serde types, and the core's values back out as Python objects:
//! the typed boundary. Options, requests and spellings cross as dicts and are read straight into
//! the core's structs (`subwords_core::options`), which check them once; results come back as
//! dicts built once.
//!
//! The reading is strict, as a JSON parser is: a `bool` is never a number, a number never a
//! `bool`, an `int` is a float only where a float is expected, and a float must be finite.
//! (`pythonize`'s deserializer reads any truthy value as `True` and `True` as 1, so
//! `byte_fallback="yes"` would pass silently; it is used for the way out only.) An error names
//! the top-level key and the value as the caller wrote it: `vocab_size=True: expected a whole
//! number from 0 to 18446744073709551615`.

use std::fmt;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::Serialize;

/// What reading a Python value into a core type found wrong (a sentence for an `OptionError`).
#[derive(Debug)]
pub struct ValueError(String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

impl de::Error for ValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ValueError(msg.to_string())
    }

    fn invalid_type(_got: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        ValueError(format!("expected {}", in_words(&expected.to_string())))
    }

    fn invalid_value(_got: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        ValueError(format!("expected {}", in_words(&expected.to_string())))
    }
}

/// serde's name of an expected primitive in a Python user's words.
fn in_words(expected: &str) -> String {
    let whole = |max: u64| format!("a whole number from 0 to {max}");
    match expected {
        "u8" => whole(u8::MAX.into()),
        "u16" => whole(u16::MAX.into()),
        "u32" => whole(u32::MAX.into()),
        "u64" | "usize" => whole(u64::MAX),
        "i64" | "i32" => "a whole number".into(),
        "f64" | "f32" => "a number".into(),
        "a boolean" => "True or False".into(),
        "a string" => "a str".into(),
        "a sequence" => "a list".into(),
        other => other.into(),
    }
}

/// Reads `value` (a dict for a struct) into `T`, naming the top-level key at fault.
pub fn from_py<T: DeserializeOwned>(value: &Bound<'_, PyAny>) -> Result<T, ValueError> {
    T::deserialize(Strict { value, top: true })
}

/// `value` as a Python object (dicts, lists, str, int, float, bool, None).
pub fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(PyErr::from)
}

struct Strict<'a, 'py> {
    value: &'a Bound<'py, PyAny>,
    /// keys of this dict are named in errors (only the outermost: its keys are the options)
    top: bool,
}

fn python_error(e: PyErr) -> ValueError {
    ValueError(e.to_string())
}

impl<'de> de::Deserializer<'de> for Strict<'_, '_> {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        let o = self.value;
        if o.is_none() {
            return visitor.visit_none();
        }
        // bool before int: Python's bool is an int
        if let Ok(b) = o.cast::<PyBool>() {
            return visitor.visit_bool(b.is_true());
        }
        if o.is_instance_of::<PyInt>()
            || (!o.is_instance_of::<PyFloat>() && o.hasattr("__index__").unwrap_or(false))
        {
            if let Ok(u) = o.extract::<u64>() {
                return visitor.visit_u64(u);
            }
            if let Ok(i) = o.extract::<i64>() {
                return visitor.visit_i64(i);
            }
            return Err(ValueError("out of range (above 2**64)".into()));
        }
        if let Ok(f) = o.cast::<PyFloat>() {
            let x = f.value();
            if !x.is_finite() {
                return Err(ValueError("must be a finite number".into()));
            }
            return visitor.visit_f64(x);
        }
        if let Ok(s) = o.cast::<PyString>() {
            return visitor.visit_str(&s.to_cow().map_err(python_error)?);
        }
        if let Ok(d) = o.cast::<PyDict>() {
            let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = d.iter().collect();
            return visitor.visit_map(Dict { items, at: 0, top: self.top, key: None });
        }
        if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
            let items: Vec<Bound<'_, PyAny>> = o
                .try_iter()
                .map_err(python_error)?
                .collect::<PyResult<_>>()
                .map_err(python_error)?;
            return visitor.visit_seq(Seq { items, at: 0 });
        }
        let kind = o.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
        Err(ValueError(format!("a {kind} is not a value this takes")))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        if self.value.is_none() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        if self.value.is_none() {
            visitor.visit_unit()
        } else {
            self.deserialize_any(visitor)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        // the core's option enums are all unit variants, written as their names
        match self.value.cast::<PyString>() {
            Ok(s) => {
                let name = s.to_cow().map_err(python_error)?.into_owned();
                visitor.visit_enum(name.into_deserializer())
            }
            Err(_) => Err(ValueError("expected a str naming one of the choices".into())),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Dict<'py> {
    items: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    at: usize,
    top: bool,
    key: Option<String>,
}

impl<'de> de::MapAccess<'de> for Dict<'_> {
    type Error = ValueError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ValueError> {
        let Some((k, _)) = self.items.get(self.at) else { return Ok(None) };
        let name = match k.cast::<PyString>() {
            Ok(s) => s.to_cow().map_err(python_error)?.into_owned(),
            Err(_) => return Err(ValueError(format!("a key must be a str, got {}", repr(k)))),
        };
        let got = seed.deserialize(name.as_str().into_deserializer()).map(Some);
        self.key = Some(name);
        got
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ValueError> {
        let (_, v) = &self.items[self.at];
        self.at += 1;
        let got = seed.deserialize(Strict { value: v, top: false });
        match (got, self.top, &self.key) {
            (Err(e), true, Some(key)) => Err(ValueError(format!("{key}={}: {e}", repr(v)))),
            (got, _, _) => got,
        }
    }
}

struct Seq<'py> {
    items: Vec<Bound<'py, PyAny>>,
    at: usize,
}

impl<'de> de::SeqAccess<'de> for Seq<'_> {
    type Error = ValueError;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ValueError> {
        let Some(v) = self.items.get(self.at) else { return Ok(None) };
        self.at += 1;
        seed.deserialize(Strict { value: v, top: false })
            .map(Some)
            .map_err(|e| ValueError(format!("item {}: {e}", self.at - 1)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.at)
    }
}

/// A value as the caller wrote it (its `repr`, cut short).
fn repr(v: &Bound<'_, PyAny>) -> String {
    let r = v.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    if r.chars().count() > 60 {
        format!("{}...", r.chars().take(57).collect::<String>())
    } else {
        r
    }
}
