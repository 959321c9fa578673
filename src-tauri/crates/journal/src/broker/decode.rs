//! A statement file's bytes → lines of cells: the size cap, the encoding (UTF-8 with or
//! without BOM, UTF-16 from Excel's "Unicode text", else GBK/GB18030), the lines (`\n`,
//! `\r\n` or a lone `\r`), and cells split on the header's delimiter (tab or comma) with
//! double quotes honoured and Excel's `="…"` / leading `'` text markers removed.

use serde::Serialize;

/// The largest statement read (a decade of daily trading is a few MB).
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum TextEncoding {
    Utf8,
    Utf8Bom,
    Utf16,
    Gbk,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("文件 {size} 字节，超过交割单导入上限 {limit} 字节（32 MB）；请按年份分段导出")]
    TooLarge { size: usize, limit: usize },
    #[error("文件是空的")]
    EmptyFile,
    #[error(
        "这是 Excel 工作簿（.xls/.xlsx），不是文本；请在券商软件里导出为文本或 CSV，或在 Excel 里另存为 CSV"
    )]
    Workbook,
    #[error("第 {line} 行既不是 UTF-8 也不是 GBK 编码的文本")]
    Encoding { line: usize },
}

/// The decoded text and which encoding it was in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    pub encoding: TextEncoding,
}

pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    if bytes.len() > MAX_BYTES {
        return Err(DecodeError::TooLarge {
            size: bytes.len(),
            limit: MAX_BYTES,
        });
    }
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(DecodeError::EmptyFile);
    }
    // xlsx is a zip; xls a compound document
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(DecodeError::Workbook);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return std::str::from_utf8(rest)
            .map(|s| Decoded {
                text: s.to_owned(),
                encoding: TextEncoding::Utf8Bom,
            })
            .map_err(|e| DecodeError::Encoding {
                line: line_at(rest, e.valid_up_to()),
            });
    }
    for (bom, enc) in [
        (&[0xFF, 0xFE], encoding_rs::UTF_16LE),
        (&[0xFE, 0xFF], encoding_rs::UTF_16BE),
    ] {
        if let Some(rest) = bytes.strip_prefix(bom) {
            let (text, bad) = enc.decode_without_bom_handling(rest);
            if bad {
                return Err(DecodeError::Encoding { line: 1 });
            }
            return Ok(Decoded {
                text: text.into_owned(),
                encoding: TextEncoding::Utf16,
            });
        }
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(Decoded {
            text: s.to_owned(),
            encoding: TextEncoding::Utf8,
        });
    }
    let (text, bad) = encoding_rs::GB18030.decode_without_bom_handling(bytes);
    if !bad {
        return Ok(Decoded {
            text: text.into_owned(),
            encoding: TextEncoding::Gbk,
        });
    }
    // name the first line that is neither
    let mut line = 1;
    for chunk in bytes.split(|b| *b == b'\n') {
        if std::str::from_utf8(chunk).is_err()
            && encoding_rs::GB18030.decode_without_bom_handling(chunk).1
        {
            break;
        }
        line += 1;
    }
    Err(DecodeError::Encoding { line })
}

/// The 1-based line holding byte `at`.
fn line_at(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The text's lines, 1-based numbers kept; `\r\n`, `\n` and a lone `\r` all end a line.
pub fn lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        out.push(&text[start..]);
    }
    out.into_iter()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect()
}

/// The delimiter a header line uses: tab when it has one, else comma.
pub fn delimiter(header: &str) -> char {
    if header.contains('\t') { '\t' } else { ',' }
}

/// Splits one line on `delim`, honouring double quotes ("" inside quotes is one quote),
/// then strips each cell of spaces, Excel's `="…"` wrapper and a leading `'`.
pub fn split(line: &str, delim: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == delim && !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.iter().map(|c| clean_cell(c)).collect()
}

/// `="600519"` → `600519`; `'000001` → `000001`; surrounding (also full-width) spaces go.
fn clean_cell(c: &str) -> String {
    let t = c.trim_matches(|ch: char| ch.is_whitespace() || ch == '\u{3000}');
    let t = match t.strip_prefix('=') {
        Some(r) => r.trim().trim_matches('"'),
        None => t,
    };
    let t = t.strip_prefix('\'').unwrap_or(t);
    t.trim_matches(|ch: char| ch.is_whitespace() || ch == '\u{3000}')
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings() {
        let text = "成交日期,证券代码\n";
        assert_eq!(
            decode(text.as_bytes()).unwrap().encoding,
            TextEncoding::Utf8
        );
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(text.as_bytes());
        let d = decode(&bom).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, TextEncoding::Utf8Bom));
        let (gbk, _, _) = encoding_rs::GBK.encode(text);
        let d = decode(&gbk).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, TextEncoding::Gbk));
        let mut utf16 = vec![0xFF, 0xFE];
        for u in text.encode_utf16() {
            utf16.extend_from_slice(&u.to_le_bytes());
        }
        let d = decode(&utf16).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text, TextEncoding::Utf16));
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        assert_eq!(
            decode(b"a,b\n1,2\n\xff\xff\xff\n"),
            Err(DecodeError::Encoding { line: 3 })
        );
        assert_eq!(decode(b"PK\x03\x04rest"), Err(DecodeError::Workbook));
        assert_eq!(decode(b" \n\n"), Err(DecodeError::EmptyFile));
        let mut big = vec![b'a'; MAX_BYTES + 1];
        let err = decode(&big).unwrap_err();
        assert!(err.to_string().contains("32 MB"), "{err}");
        // exactly at the cap is read
        big.pop();
        let at_cap = decode(&big).unwrap();
        assert_eq!(at_cap.text.len(), MAX_BYTES);
    }

    #[test]
    fn lines_keep_their_numbers() {
        let got: Vec<(usize, &str)> = lines("a\r\nb\n\nc\rd");
        assert_eq!(got, [(1, "a"), (2, "b"), (3, ""), (4, "c"), (5, "d")]);
    }

    #[test]
    fn cells() {
        assert_eq!(
            split(r#"="600519", "贵州茅台" ,'000001,"1,234.50","a""b""#, ','),
            ["600519", "贵州茅台", "000001", "1,234.50", "a\"b"]
        );
        assert_eq!(split("a\t\tb\t", '\t'), ["a", "", "b", ""]);
        assert_eq!(delimiter("a\tb,c"), '\t');
    }
}
