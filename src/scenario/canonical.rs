//! The canonical TOML text of a scenario, written from its JSON.
//!
//! A scenario's JSON and TOML forms hold the same values (tables, arrays, strings, integers and
//! booleans: no floats, no nulls, no dates), so the TOML is a rewriting of the JSON's tokens.
//! Writing it here rather than with the `toml` crate's serializer keeps that serializer, which
//! is compiled for every type of the format, out of the sandbox's first download. The layout
//! is the serializer's (a test checks it for every shipped and generated scenario); strings are
//! always basic strings with escapes, where the serializer picks a literal or multi-line string
//! for text with quotes, backslashes or line breaks, so such text is written differently but
//! reads back the same (a test checks that too).
//! The input is always `serde_json`'s output for a [`super::Scenario`], so anything else is a
//! bug, reported as an error rather than a panic.

/// A JSON value as the writer needs it: strings kept as their JSON tokens (a JSON string token
/// is a TOML basic string, escapes and all, but for one character), objects in their order.
enum Value<'a> {
    Scalar(&'a str),
    Array(Vec<Value<'a>>),
    Table(Vec<(&'a str, Value<'a>)>),
}

/// The deepest nesting the writer follows; a scenario's JSON is four levels deep.
const DEPTH_MAX: usize = 16;

/// The TOML text of a scenario's JSON (as `serde_json` writes it).
pub fn toml_from_json(json: &str) -> Result<String, String> {
    let mut p = Parser { s: json, at: 0 };
    let value = p.value(0)?;
    p.space();
    if p.at != json.len() {
        return Err(format!("trailing text at byte {}", p.at));
    }
    let Value::Table(top) = value else {
        return Err("a scenario is a table".to_string());
    };
    let mut out = String::with_capacity(json.len() * 2);
    table(&mut out, &mut Vec::new(), &top)?;
    Ok(out)
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn space(&mut self) {
        let rest = &self.s[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: u8) -> bool {
        self.space();
        if self.s.as_bytes().get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.at))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, String> {
        if depth > DEPTH_MAX {
            return Err("nested too deeply".to_string());
        }
        self.space();
        match self.s.as_bytes().get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut fields = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.space();
                        let key = self.string()?;
                        self.expect(b':')?;
                        fields.push((key, self.value(depth + 1)?));
                        if self.eat(b'}') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(Value::Table(fields))
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                Ok(Value::Array(items))
            }
            Some(b'"') => Ok(Value::Scalar(self.string()?)),
            Some(_) => {
                let rest = &self.s[self.at..];
                let n = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .unwrap_or(rest.len());
                let token = &rest[..n];
                let integer = token.strip_prefix('-').unwrap_or(token);
                if token == "true"
                    || token == "false"
                    || (!integer.is_empty() && integer.bytes().all(|b| b.is_ascii_digit()))
                {
                    self.at += n;
                    Ok(Value::Scalar(token))
                } else if token == "null" {
                    Err("a scenario has no null values".to_string())
                } else {
                    Err(format!("unexpected value at byte {}", self.at))
                }
            }
            None => Err("unexpected end".to_string()),
        }
    }

    /// A string token, quotes included.
    fn string(&mut self) -> Result<&'a str, String> {
        let bytes = self.s.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return Err(format!("expected a string at byte {}", self.at));
        }
        let start = self.at;
        let mut i = self.at + 1;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => {
                    self.at = i + 1;
                    return Ok(&self.s[start..self.at]);
                }
                _ => i += 1,
            }
        }
        Err("unterminated string".to_string())
    }
}

/// Writes the table at `path`: its plain values first, then its tables and arrays of tables,
/// each under its header, as the `toml` crate lays a document out.
fn table(out: &mut String, path: &mut Vec<String>, fields: &[(&str, Value)]) -> Result<(), String> {
    for (key, value) in fields {
        if !is_section(value) {
            out.push_str(&bare(key)?);
            out.push_str(" = ");
            inline(out, value)?;
            out.push('\n');
        }
    }
    for (key, value) in fields {
        path.push(bare(key)?);
        match value {
            Value::Table(inner) => {
                header(out, path, "[", "]");
                table(out, path, inner)?;
            }
            Value::Array(items) if is_section(value) => {
                for item in items {
                    if let Value::Table(inner) = item {
                        header(out, path, "[[", "]]");
                        table(out, path, inner)?;
                    }
                }
            }
            _ => {}
        }
        path.pop();
    }
    Ok(())
}

fn header(out: &mut String, path: &[String], open: &str, close: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(open);
    out.push_str(&path.join("."));
    out.push_str(close);
    out.push('\n');
}

/// Whether a value is written as a section of its own: a table, or a non-empty array of
/// tables.
fn is_section(value: &Value) -> bool {
    match value {
        Value::Table(_) => true,
        Value::Array(items) => {
            !items.is_empty() && items.iter().all(|i| matches!(i, Value::Table(_)))
        }
        Value::Scalar(_) => false,
    }
}

/// A value written on one line: arrays and tables inline.
fn inline(out: &mut String, value: &Value) -> Result<(), String> {
    match value {
        Value::Scalar(token) if token.starts_with('"') => out.push_str(&basic_string(token)),
        Value::Scalar(token) => out.push_str(token),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inline(out, item)?;
            }
            out.push(']');
        }
        Value::Table(fields) => {
            out.push('{');
            for (i, (key, value)) in fields.iter().enumerate() {
                out.push_str(if i > 0 { ", " } else { " " });
                out.push_str(&bare(key)?);
                out.push_str(" = ");
                inline(out, value)?;
            }
            out.push_str(if fields.is_empty() { "}" } else { " }" });
        }
    }
    Ok(())
}

/// A JSON string token as a TOML basic string. The escapes JSON writes (`\"`, `\\`, `\n`,
/// `\t`, `\uXXXX`, ...) are TOML's too; only DEL, which JSON leaves as it is and TOML forbids
/// in a string, needs escaping.
fn basic_string(token: &str) -> String {
    token.replace('\u{7f}', "\\u007F")
}

/// A key as written: the format's keys are all bare words.
fn bare(key_token: &str) -> Result<String, String> {
    let key = key_token.trim_matches('"');
    if !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(key.to_string())
    } else {
        Err(format!("the key {key_token} is not a bare word"))
    }
}
