//! Lesson files the user opened: the checker's answer on a file ([`CheckReply`]) and the files
//! kept in the browser ([`OpenedFiles`]), with their storage key and bound. Kept apart because
//! the checker runs in a worker of its own and the kept files are a stored format; the course
//! only reads the lessons they hold.

use serde::Serialize;
use serde_json::Value;

use crate::json::Obj;
use crate::lesson::wire::Loaded;

/// The local storage key of the lesson files the user opened.
pub const OPENED_KEY: &str = "lockstep.lessons.v1";

/// The most lesson files kept in local storage; opening another replaces the oldest.
pub const OPENED_MAX: usize = 8;

/// What the lesson checker answers for a file: the lesson in compact form, or every problem
/// with its line. The worker writes it with serde; the page reads it with
/// [`CheckReply::from_json`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckReply {
    /// The lesson in compact form ([`crate::lesson::wire`]), kept as the JSON it travels as:
    /// the page reads it with the compact form's reader and stores it as it came, so that its
    /// bundle needs no writer of that form.
    Opened {
        lesson: serde_json::Value,
    },
    Refused {
        errors: Vec<(u32, String)>,
    },
    /// The checker could not run (the page says this, never the checker): why, blaming no
    /// line of the file.
    Unavailable {
        why: String,
    },
}

/// Reads a lesson file the user picked or pasted, and checks it exactly as
/// `lockstep lesson check` does: every claim, gate, cue and exercise is run through the
/// engine. Only a lesson without a problem opens; otherwise every problem comes back with its
/// line. The page runs this in a worker of its own (`src/bin/checker.rs`), so that neither
/// the Markdown parser nor the checker is part of the pages' bundles.
pub fn check_lesson_file(text: &str) -> CheckReply {
    let refused = |errors: Vec<crate::lesson::LessonError>| CheckReply::Refused {
        errors: errors.into_iter().map(|e| (e.line, e.message)).collect(),
    };
    let lesson = match crate::lesson::parse(text) {
        Ok(l) => l,
        Err(errors) => return refused(errors),
    };
    let checked = crate::lesson::check(&lesson);
    if !checked.errors.is_empty() {
        return refused(checked.errors);
    }
    CheckReply::Opened {
        lesson: serde_json::to_value(crate::lesson::wire::to_wire(&lesson))
            .expect("a lesson's compact form is JSON"),
    }
}

/// [`check_lesson_file`], read into a lesson for the course.
pub fn open_lesson_file(
    text: &str,
) -> Result<(Loaded, OpenedFile), Vec<crate::lesson::LessonError>> {
    CheckReply::into_opened(check_lesson_file(text), text)
}

impl CheckReply {
    /// Reads the checker's answer, written as serde writes this type, by hand: a derived
    /// reader would be one more copy of serde_json's reading code in the lesson view's bundle.
    pub fn from_json(text: &str) -> Result<CheckReply, String> {
        use crate::json::{list, string, Obj};
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the checker's answer")?;
        // Serde writes each kind as an object of one member, named after the kind, whose
        // value holds the kind's members.
        let kind = |name: &str, members: &[&str]| -> Result<Option<Obj>, String> {
            let Some(inner) = o.get(name) else {
                return Ok(None);
            };
            o.only(&[name])?;
            let inner = Obj::of(inner, &format!("\"{name}\""))?;
            inner.only(members)?;
            Ok(Some(inner))
        };
        if let Some(opened) = kind("opened", &["lesson"])? {
            return Ok(CheckReply::Opened {
                lesson: opened.need("lesson")?.clone(),
            });
        }
        if let Some(refused) = kind("refused", &["errors"])? {
            let errors = refused.items("errors", |e| match list(e)?.as_slice() {
                [line, message] => Ok((
                    line.as_u64()
                        .and_then(|l| u32::try_from(l).ok())
                        .ok_or("a problem's line is not a line number")?,
                    string(message)?,
                )),
                _ => Err("not a line and a problem".to_string()),
            })?;
            return Ok(CheckReply::Refused { errors });
        }
        if let Some(unavailable) = kind("unavailable", &["why"])? {
            return Ok(CheckReply::Unavailable {
                why: unavailable.string("why")?,
            });
        }
        Err("the checker's answer is none it gives".into())
    }

    /// The lesson to add to the course and the file to keep, or the problems.
    pub fn into_opened(
        self,
        text: &str,
    ) -> Result<(Loaded, OpenedFile), Vec<crate::lesson::LessonError>> {
        let error = |line, message| crate::lesson::LessonError { line, message };
        match self {
            CheckReply::Refused { errors } => {
                Err(errors.into_iter().map(|(l, m)| error(l, m)).collect())
            }
            // Line 0 is no line: the view shows such a problem without one.
            CheckReply::Unavailable { why } => Err(vec![error(0, why)]),
            CheckReply::Opened { lesson } => {
                let mut file = OpenedFile {
                    id: String::new(),
                    text: text.to_string(),
                    lesson,
                    source: None,
                };
                let loaded = file.read().map_err(|e| vec![error(1, e)])?;
                file.id = loaded.lesson.id.clone();
                Ok((loaded, file))
            }
        }
    }
}

/// The lesson files the user opened, as kept in local storage: each file's text and the
/// lesson in compact form (so that a reload needs no parser), newest last, one per lesson id,
/// at most [`OPENED_MAX`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpenedFiles {
    pub files: Vec<OpenedFile>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpenedFile {
    pub id: String,
    pub text: String,
    /// The lesson in compact form, as JSON ([`CheckReply::Opened`]).
    pub lesson: serde_json::Value,
    /// The address the file was opened from (a `?open=` link), so that the link opens the
    /// kept copy when the network is off, and a changed file replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl OpenedFile {
    /// The lesson, read from its compact form.
    pub fn read(&self) -> Result<Loaded, String> {
        let w = crate::lesson::wire::lesson_of(&self.lesson)?;
        crate::lesson::wire::from_wire(w)
    }

    /// The lesson's title, for saying it was opened (as words: the sentence is text).
    pub fn title(&self) -> String {
        plain(
            self.lesson
                .get("title")
                .and_then(serde_json::Value::as_str)
                .unwrap_or(&self.id),
        )
    }
}

impl OpenedFiles {
    /// The files kept in local storage; anything unreadable counts as none.
    pub fn read(stored: Option<&str>) -> OpenedFiles {
        stored
            .and_then(|s| OpenedFiles::from_json(s).ok())
            .unwrap_or_default()
    }

    fn from_json(text: &str) -> Result<OpenedFiles, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the opened files")?;
        Ok(OpenedFiles {
            files: o.opt_items("files", |v| {
                let f = Obj::of(v, "an opened file")?;
                Ok(OpenedFile {
                    id: f.string("id")?,
                    text: f.string("text")?,
                    lesson: f.get("lesson").cloned().unwrap_or_default(),
                    source: f.opt_string("source")?,
                })
            })?,
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// With a file added: it replaces an earlier file of the same lesson, and the oldest goes
    /// when there are too many.
    pub fn with(&self, file: OpenedFile) -> OpenedFiles {
        let mut files: Vec<OpenedFile> = self
            .files
            .iter()
            .filter(|f| f.id != file.id)
            .cloned()
            .collect();
        files.push(file);
        let excess = files.len().saturating_sub(OPENED_MAX);
        files.drain(..excess);
        OpenedFiles { files }
    }

    /// The file kept from an address, if any.
    pub fn from_source(&self, url: &str) -> Option<&OpenedFile> {
        self.files
            .iter()
            .rev()
            .find(|f| f.source.as_deref() == Some(url))
    }

    pub fn without(&self, id: &str) -> OpenedFiles {
        OpenedFiles {
            files: self.files.iter().filter(|f| f.id != id).cloned().collect(),
        }
    }

    /// The texts of the files whose lesson no longer reads, because an earlier version of the
    /// page stored it: the page checks them again from their text, so nothing opened is lost.
    pub fn stale(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| f.read().is_err())
            .map(|f| f.text.clone())
            .collect()
    }

    /// The lessons; one that no longer reads (the app changed) is left out until it is checked
    /// again ([`OpenedFiles::stale`]).
    pub fn lessons(&self) -> Vec<Loaded> {
        self.files.iter().filter_map(|f| f.read().ok()).collect()
    }
}

/// A short Markdown text as plain words where its rendering is not at hand (an opened file's
/// title, read before the file is): code spans and emphasis lose their marks.
fn plain(markdown: &str) -> String {
    markdown
        .chars()
        .filter(|c| !matches!(c, '`' | '*'))
        .collect::<String>()
}
