//! A small incremental Server-Sent Events parser (no reconnects: a POST that fails is
//! an error, never silently re-sent). Handles LF, CRLF and CR line ends, multi-line
//! `data:`, comments, and events split anywhere across network reads.

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the server named the event.
    pub event: Option<String>,
    /// All `data:` lines of the event, joined with `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of a line that has not ended yet.
    pending: Vec<u8>,
    /// The previous read ended in `\r`; a leading `\n` now belongs to that line end.
    skip_lf: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes from the network; calls `on_event` for every completed event.
    pub fn feed(&mut self, mut bytes: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let line_end = bytes[pos];
            let line = &bytes[..pos];
            if self.pending.is_empty() {
                self.line(line, on_event);
            } else {
                let mut full = std::mem::take(&mut self.pending);
                full.extend_from_slice(line);
                self.line(&full, on_event);
                full.clear();
                self.pending = full;
            }
            bytes = &bytes[pos + 1..];
            if line_end == b'\r' {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.pending.extend_from_slice(bytes);
    }

    /// End of input: an unterminated last line and an undispatched event still count
    /// (some servers close without the final blank line).
    pub fn finish(&mut self, on_event: &mut impl FnMut(SseEvent)) {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.line(&line, on_event);
        }
        self.dispatch(on_event);
    }

    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                push_utf8(&mut self.data, value);
                self.has_data = true;
            }
            b"event" => {
                let mut name = String::new();
                push_utf8(&mut name, value);
                self.event = Some(name);
            }
            _ => {} // id, retry and unknown fields do not matter for one-shot POST streams
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent)) {
        if self.has_data {
            on_event(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
            });
        }
        self.event = None;
        self.data.clear();
        self.has_data = false;
    }
}

fn push_utf8(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(input: &str, piece: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in input.as_bytes().chunks(piece) {
            p.feed(c, &mut |e| out.push(e));
        }
        p.finish(&mut |e| out.push(e));
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    #[test]
    fn parses_lf_crlf_cr_comments_and_multiline_data_at_any_split() {
        let input = ": keep-alive\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n\
                     data: line1\ndata: line2\n\n\
                     data:no-space\r\rid: 7\nretry: 100\ndata: x\n\n\
                     data: 中文\n\n";
        let expected = vec![
            ev(Some("message_start"), "{\"a\":1}"),
            ev(None, "line1\nline2"),
            ev(None, "no-space"),
            ev(None, "x"),
            ev(None, "中文"),
        ];
        for piece in 1..=input.len() {
            assert_eq!(
                parse_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn empty_reads_do_not_lose_a_pending_cr() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for piece in ["data: a\r", "", "\n", "\r\n"] {
            p.feed(piece.as_bytes(), &mut |e| out.push(e));
        }
        assert_eq!(out, vec![ev(None, "a")]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_name_does_not_leak() {
        let out = parse_in_pieces("event: ping\n\ndata: 1\n\n", 3);
        assert_eq!(out, vec![ev(None, "1")]);
    }

    #[test]
    fn unterminated_last_event_is_flushed_at_end() {
        assert_eq!(parse_in_pieces("data: [DONE]", 4), vec![ev(None, "[DONE]")]);
        assert_eq!(parse_in_pieces("data: a\n", 4), vec![ev(None, "a")]);
    }
}
