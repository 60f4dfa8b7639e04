//! Splits fio's stdout into JSON status documents and foreign message lines.
//!
//! fio prints each status (`--output-format=json --status-interval=1`) as a pretty-printed root
//! object that starts with a line that is exactly `{` and ends with a line that is exactly `}`;
//! nested lines are indented. Anything else outside a document (`fio: terminating on signal 2`,
//! error lines) is a message. Owns: that framing only. Must not touch: JSON parsing, figures.

/// One framed piece of fio's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// The text of one root JSON object.
    Doc(String),
    /// A line outside any document.
    Message(String),
}

/// A line framer fed one line at a time.
#[derive(Debug, Default)]
pub struct Framer {
    doc: Option<String>,
}

impl Framer {
    /// A framer outside any document.
    #[must_use]
    pub fn new() -> Framer {
        Framer::default()
    }

    /// Feeds one line (with or without its newline). Returns a finished frame, if any.
    /// A `{` line inside a document drops the cut document and starts a new one, returning a
    /// message that says so.
    pub fn push(&mut self, line: &str) -> Option<Frame> {
        let line = line.trim_end_matches(['\n', '\r']);
        match (&mut self.doc, line) {
            (None, "{") => {
                self.doc = Some(String::from("{\n"));
                None
            }
            (None, _) if line.trim().is_empty() => None,
            (None, _) => Some(Frame::Message(line.to_string())),
            (Some(doc), "}") => {
                doc.push('}');
                self.doc.take().map(Frame::Doc)
            }
            (Some(doc), "{") => {
                let lines = doc.lines().count();
                *doc = String::from("{\n");
                Some(Frame::Message(format!(
                    "pagewatch: dropped a fio status cut after {lines} lines"
                )))
            }
            (Some(doc), _) => {
                doc.push_str(line);
                doc.push('\n');
                None
            }
        }
    }

    /// Ends the stream: a document still open was cut, so it is reported as a message.
    pub fn finish(&mut self) -> Option<Frame> {
        self.doc.take().map(|doc| {
            Frame::Message(format!(
                "pagewatch: fio output ended inside a status ({} lines dropped)",
                doc.lines().count()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(text: &str) -> Vec<Frame> {
        let mut f = Framer::new();
        let mut out: Vec<Frame> = text.lines().filter_map(|l| f.push(l)).collect();
        out.extend(f.finish());
        out
    }

    #[test]
    fn documents_and_messages() {
        let out = frames(
            "fio: sprandom sets norandommap=1\n{\n  \"a\" : {\n  }\n}\n\nfio: terminating on signal 2\n{\n}\n",
        );
        assert_eq!(
            out,
            vec![
                Frame::Message("fio: sprandom sets norandommap=1".into()),
                Frame::Doc("{\n  \"a\" : {\n  }\n}".into()),
                Frame::Message("fio: terminating on signal 2".into()),
                Frame::Doc("{\n}".into()),
            ]
        );
    }

    #[test]
    fn a_cut_document_is_dropped_and_said() {
        let out = frames("{\n  \"a\" : 1,\n{\n  \"b\" : 2\n}\n{\n  \"c\" :");
        assert_eq!(out.len(), 3);
        assert!(matches!(&out[0], Frame::Message(m) if m.contains("cut after 2 lines")));
        assert_eq!(out[1], Frame::Doc("{\n  \"b\" : 2\n}".into()));
        assert!(matches!(&out[2], Frame::Message(m) if m.contains("ended inside")));
    }

    #[test]
    fn crlf_and_indented_braces() {
        let out = frames("{\r\n  {\r\n  }\r\n}\r\n");
        assert_eq!(out, vec![Frame::Doc("{\n  {\n  }\n}".into())]);
    }
}
