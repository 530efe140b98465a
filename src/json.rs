//! Reading JSON member by member, with errors that name what is wrong.
//!
//! The page's bundles read several JSON forms (recordings, the lessons' compact form). Readers
//! derived with serde are generated anew for every type and inlined with the parser; reading a
//! [`Value`] once and walking it here costs much less of the download (for recordings, 8 KB
//! gzip where derived readers cost 42). Natively the same readers run, so they are tested there.

use serde_json::{Map, Value};

/// A JSON object's members, read by name with errors that name the member.
pub struct Obj<'a>(&'a Map<String, Value>);

impl<'a> Obj<'a> {
    pub fn of(v: &'a Value, what: &str) -> Result<Obj<'a>, String> {
        match v {
            Value::Object(m) => Ok(Obj(m)),
            _ => Err(format!("{what} is not a JSON object")),
        }
    }
    /// Every member, by name, sorted by name: for an object that is a map.
    pub fn members(&self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.0.iter()
    }
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }
    pub fn need(&self, name: &str) -> Result<&'a Value, String> {
        self.get(name)
            .ok_or_else(|| format!("\"{name}\" is missing"))
    }
    pub fn u64(&self, name: &str) -> Result<u64, String> {
        self.need(name)?
            .as_u64()
            .ok_or_else(|| format!("\"{name}\" is not a whole number"))
    }
    pub fn u32(&self, name: &str) -> Result<u32, String> {
        u32::try_from(self.u64(name)?).map_err(|_| format!("\"{name}\" is too large"))
    }
    /// A member that may be left out (or `null`), read by `read` when it is there.
    fn opt<T>(
        &self,
        name: &str,
        read: impl Fn(&Self, &str) -> Result<T, String>,
    ) -> Result<Option<T>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(_) => read(self, name).map(Some),
        }
    }
    pub fn opt_u32(&self, name: &str) -> Result<Option<u32>, String> {
        self.opt(name, Self::u32)
    }
    pub fn opt_u64(&self, name: &str) -> Result<Option<u64>, String> {
        self.opt(name, Self::u64)
    }
    pub fn bool(&self, name: &str) -> Result<bool, String> {
        self.need(name)?
            .as_bool()
            .ok_or_else(|| format!("\"{name}\" is not true or false"))
    }
    pub fn str(&self, name: &str) -> Result<&'a str, String> {
        self.need(name)?
            .as_str()
            .ok_or_else(|| format!("\"{name}\" is not a string"))
    }
    pub fn list(&self, name: &str) -> Result<&'a Vec<Value>, String> {
        match self.need(name)? {
            Value::Array(items) => Ok(items),
            _ => Err(format!("\"{name}\" is not a list")),
        }
    }
    /// A member that names one of a closed set of words.
    pub fn word<T: Copy>(&self, name: &str, words: &[(&str, T)]) -> Result<T, String> {
        let w = self.str(name)?;
        match words.iter().position(|(x, _)| *x == w) {
            Some(i) => Ok(words[i].1),
            None => Err(not_a_word(name, w)),
        }
    }
    /// Refuses a member other than the named ones, so that a misspelt member is an error
    /// rather than silently missing.
    pub fn only(&self, names: &[&str]) -> Result<(), String> {
        match self.0.keys().find(|k| !names.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(format!("unknown member \"{k}\"")),
        }
    }
    pub fn string(&self, name: &str) -> Result<String, String> {
        self.str(name).map(str::to_string)
    }
    pub fn f64(&self, name: &str) -> Result<f64, String> {
        self.need(name)?
            .as_f64()
            .ok_or_else(|| format!("\"{name}\" is not a number"))
    }
    pub fn opt_string(&self, name: &str) -> Result<Option<String>, String> {
        self.opt(name, Self::string)
    }
    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, String> {
        self.opt(name, Self::bool)
    }
    /// A list member, each item read by `read`; an error names the item (from 1).
    pub fn items<T>(
        &self,
        name: &str,
        read: impl Fn(&'a Value) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        list_of(self.list(name)?, name, read)
    }
    /// A list member that may be left out (read as empty).
    pub fn opt_items<T>(
        &self,
        name: &str,
        read: impl Fn(&'a Value) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(_) => self.items(name, read),
        }
    }
    pub fn strings(&self, name: &str) -> Result<Vec<String>, String> {
        self.items(name, string)
    }
    pub fn opt_strings(&self, name: &str) -> Result<Vec<String>, String> {
        self.opt_items(name, string)
    }
    pub fn u64s(&self, name: &str) -> Result<Vec<u64>, String> {
        self.items(name, |v| {
            v.as_u64().ok_or_else(|| "not a whole number".to_string())
        })
    }
}

/// Each item of a list read by `read`; an error names the list and the item (from 1).
pub fn list_of<'a, T>(
    items: &'a [Value],
    name: &str,
    read: impl Fn(&'a Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| read(v).map_err(|e| format!("\"{name}\" item {}: {e}", i + 1)))
        .collect()
}

/// The error of a member whose word is not one of its set's; out of line, as [`Obj::word`] is
/// compiled for each set.
#[inline(never)]
fn not_a_word(name: &str, w: &str) -> String {
    format!("\"{name}\" is \"{w}\", which is not one of its words")
}

/// A list.
pub fn list(v: &Value) -> Result<&Vec<Value>, String> {
    match v {
        Value::Array(items) => Ok(items),
        _ => Err("not a list".into()),
    }
}

/// A string.
pub fn string(v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| "not a string".to_string())
}
