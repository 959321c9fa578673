//! A stock's daily chart as a PNG, for the chats that take images.
//!
//! Which platforms get the picture: **Telegram** (`sendPhoto` takes the PNG as a
//! multipart upload) and **Feishu** (an image is uploaded for an `image_key` with the app's
//! own token, then sent as an image message), both with what the desk already holds.
//! **DingTalk** answers through the message's session webhook, whose messages are text,
//! Markdown, link and card types: a picture there needs a public `picURL` the desktop does
//! not have, or the app's access token, a media upload and the robot message API with the
//! robot's code — a second credential path for one image, so DingTalk gets the caption's
//! text only. **WeCom**'s smart robot replies over its WebSocket as text or Markdown, so it
//! is text only too.
//!
//! The picture is drawn from [`ChartPicture`] alone ([`render_png`] is pure): candles in
//! A-share colours (red up, green down, as the stock page), volume bars under them in the
//! same colours, the Wyckoff labels the stock page places (blue ▲ under a low,
//! orange ▼ over a high, grey for a label a later bar revised or removed), the current
//! range's support and resistance as dashed lines, and in digits only (no font needed) the
//! code, the last bar's date and its close in the top left, the price scale's top and
//! bottom on the right. Words go in the caption ([`caption`]). No bars, no picture.

use wyckoff_session::Desk;
use wyckoff_session::desk_chart_image::{ChartPicture, PictureBar, PictureMark};
use wyckoff_session::reports::ChartError;

use crate::command::BotCommand;

/// The picture's size in pixels (16:9, sharp on a phone, a few tens of kilobytes).
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 540;
/// The plot area: candles between these x (right of it, the price scale's digits).
pub const PLOT_LEFT: u32 = 12;
pub const PLOT_RIGHT: u32 = 880;
/// The candles' panel (the header's digits above it).
pub const PRICE_TOP: u32 = 40;
pub const PRICE_BOTTOM: u32 = 410;
/// The volume panel.
pub const VOLUME_TOP: u32 = 425;
pub const VOLUME_BOTTOM: u32 = 528;

/// The colours, as the stock page draws them.
pub type Rgb = [u8; 3];
pub const UP: Rgb = [0xd1, 0x43, 0x43];
pub const DOWN: Rgb = [0x2e, 0x9e, 0x5b];
/// A label under a low (accumulation's events, a distribution's AR).
pub const LOW_MARK: Rgb = [0x2f, 0x6f, 0xd6];
/// A label over a high.
pub const HIGH_MARK: Rgb = [0xc2, 0x41, 0x0c];
/// A label a later bar revised or removed.
pub const SUPERSEDED: Rgb = [0x9c, 0xa3, 0xaf];
pub const SUPPORT: Rgb = [0x7c, 0x3a, 0xed];
pub const RESISTANCE: Rgb = [0xa1, 0x62, 0x07];
const BACKGROUND: Rgb = [0xff, 0xff, 0xff];
const GRID: Rgb = [0xe5, 0xe7, 0xeb];
const INK: Rgb = [0x37, 0x41, 0x51];

/// Telegram's caption limit, in characters.
pub use crate::telegram::CAPTION_LIMIT;

#[derive(Debug, thiserror::Error)]
pub enum ChartImageError {
    #[error("no bars to draw for {0}")]
    NoBars(String),
    #[error("the chart's PNG was not written: {0}")]
    Encode(String),
}

/// A chart ready to send: the PNG and its caption.
#[derive(Debug, Clone)]
pub struct ChartImage {
    pub code: String,
    pub png: Vec<u8>,
    pub caption: String,
    /// YYYYMMDD of the newest bar drawn.
    pub last_date: u32,
}

/// Which answers carry a chart: `/analyze CODE`, and a message that is exactly "分析 CODE"
/// (a space optional) — one stock named, nothing else asked. Everything else is text only.
pub fn chart_code(command: &BotCommand) -> Option<&str> {
    match command {
        BotCommand::Analyze { code } => Some(code),
        BotCommand::Text(text) => {
            let code = text.trim().strip_prefix("分析")?.trim();
            (code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit())).then_some(code)
        }
        _ => None,
    }
}

/// `code`'s daily chart from the desk's cached bars, drawn, with its caption; or, when
/// there is no picture to draw, what the chat is told instead (why, in Chinese). The one
/// entry every platform that takes images uses (Telegram's `sendPhoto`, Feishu's upload).
pub async fn daily_chart_png(desk: &Desk, code: &str) -> Result<ChartImage, String> {
    let picture = desk
        .chart_picture(code)
        .await
        .map_err(|e| no_chart_text(code, &e))?;
    let png = render_png(&picture).map_err(|e| {
        tracing::warn!(code, "the chart was not drawn: {e}");
        format!("{code} 的日线图没有画成：{e}")
    })?;
    Ok(ChartImage {
        code: picture.code.clone(),
        caption: caption(&picture),
        last_date: picture.last_date(),
        png,
    })
}

/// What a chat is told when there is no chart to send.
pub fn no_chart_text(code: &str, e: &ChartError) -> String {
    match e {
        ChartError::UnknownCode { code } => {
            format!("没有 {code} 的日线图：股票列表和本地缓存里都没有这个代码。")
        }
        ChartError::NoData { code, message } if message.trim().is_empty() => {
            format!("没有 {code} 的日线图：本地还没有它的日线数据。")
        }
        ChartError::NoData { code, message } => {
            format!("没有 {code} 的日线图：本地还没有它的日线数据（{message}）。")
        }
        ChartError::InvalidCode { message } => format!("没有 {code} 的日线图：{message}"),
        ChartError::Other { message } => format!("{code} 的日线图没有画成：{message}"),
    }
}

fn iso(date: u32) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date / 10000,
        (date / 100) % 100,
        date % 100
    )
}

/// The picture's words: code and name, the last bar's date (how fresh it is), the close,
/// the range and phase, the labels drawn, and the key to the colours. At most
/// [`CAPTION_LIMIT`] characters (older labels are left out first).
pub fn caption(p: &ChartPicture) -> String {
    let name = p.name.as_deref().unwrap_or("");
    let mut head = vec![
        format!("{} {name} 日线 · 最后一根 {}", p.code, iso(p.last_date())).replace("  ", " "),
    ];
    let status = match p.data_status.as_str() {
        "ok" => None,
        "stale" => Some("数据陈旧（stale）：缓存没有最近交易日的日线".to_owned()),
        "partial" => Some("数据不完整（partial）".to_owned()),
        other => Some(format!("数据状态：{other}")),
    };
    head.extend(status);
    if let Some(close) = p.last_close() {
        head.push(format!("收盘 {close:.2} · 近 {} 个交易日", p.bars.len()));
    }
    let range = match (p.support, p.resistance) {
        (Some(s), Some(r)) => Some(format!("区间：支撑 {s:.2} / 阻力 {r:.2}")),
        (Some(s), None) => Some(format!("区间：支撑 {s:.2}")),
        (None, Some(r)) => Some(format!("区间：阻力 {r:.2}")),
        (None, None) => None,
    };
    head.extend(range);
    if let Some(schematic) = &p.schematic {
        let kind = match schematic.as_str() {
            "accumulation" => "吸筹",
            "distribution" => "派发",
            other => other,
        };
        let phase = p
            .phase
            .as_deref()
            .map(|x| format!(" 阶段 {x}"))
            .unwrap_or_default();
        head.push(format!("结构：{kind}{phase}"));
    }
    let key = "红涨绿跌；蓝▲低点事件，橙▼高点事件，灰色为后来修订或撤销的标注；虚线为支撑（紫）和阻力（褐）。";
    let labels: Vec<String> = p
        .marks
        .iter()
        .map(|m| {
            let later = if m.superseded { "（已修订）" } else { "" };
            format!("{} {}{later}", m.label, iso(m.date))
        })
        .collect();
    let fixed = head.join("\n").chars().count() + key.chars().count() + 2;
    // The newest labels that fit.
    let mut shown: Vec<&str> = Vec::new();
    let mut used = "事件：".chars().count() + 1;
    for l in labels.iter().rev() {
        let cost = l.chars().count() + 3;
        if fixed + used + cost > CAPTION_LIMIT {
            break;
        }
        used += cost;
        shown.push(l);
    }
    shown.reverse();
    let mut out = head;
    if labels.is_empty() {
        out.push("事件：图中无威科夫事件".into());
    } else {
        let more = if shown.len() < labels.len() {
            format!("（另有 {} 个更早的）", labels.len() - shown.len())
        } else {
            String::new()
        };
        out.push(format!("事件：{}{more}", shown.join(" · ")));
    }
    out.push(key.into());
    let text = out.join("\n");
    text.chars().take(CAPTION_LIMIT).collect()
}

/// The x of bar `i`'s centre, of `n` bars across the plot.
pub fn bar_center_x(n: usize, i: usize) -> u32 {
    let width = f64::from(PLOT_RIGHT - PLOT_LEFT);
    let step = width / n.max(1) as f64;
    PLOT_LEFT + ((i as f64 + 0.5) * step) as u32
}

/// The price scale: the bars' low to high, widened to take range lines near them and a
/// margin for the labels.
#[derive(Debug, Clone, Copy)]
pub struct PriceScale {
    pub low: f64,
    pub high: f64,
}

impl PriceScale {
    pub fn of(p: &ChartPicture) -> PriceScale {
        let low = p.bars.iter().map(|b| b.low).fold(f64::INFINITY, f64::min);
        let high = p
            .bars
            .iter()
            .map(|b| b.high)
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut lo, mut hi) = (low, high);
        // A range line far from the bars would squash them: only near ones widen the scale.
        for level in [p.support, p.resistance].into_iter().flatten() {
            if level >= low * 0.85 && level <= high * 1.15 {
                lo = lo.min(level);
                hi = hi.max(level);
            }
        }
        if hi <= lo {
            let pad = (lo.abs() * 0.01).max(0.01);
            lo -= pad;
            hi += pad;
        }
        let margin = (hi - lo) * 0.06;
        PriceScale {
            low: lo - margin,
            high: hi + margin,
        }
    }

    /// The y of `price` in the candles' panel (rounded; clamped to the panel).
    pub fn y(&self, price: f64) -> u32 {
        let top = f64::from(PRICE_TOP);
        let bottom = f64::from(PRICE_BOTTOM);
        let t = (self.high - price) / (self.high - self.low);
        (top + t * (bottom - top)).round().clamp(top, bottom) as u32
    }

    fn contains(&self, price: f64) -> bool {
        price >= self.low && price <= self.high
    }
}

/// An RGB canvas.
struct Canvas {
    px: Vec<u8>,
}

impl Canvas {
    fn new() -> Canvas {
        let mut px = Vec::with_capacity((WIDTH * HEIGHT * 3) as usize);
        for _ in 0..WIDTH * HEIGHT {
            px.extend_from_slice(&BACKGROUND);
        }
        Canvas { px }
    }

    fn set(&mut self, x: u32, y: u32, c: Rgb) {
        if x < WIDTH && y < HEIGHT {
            let at = ((y * WIDTH + x) * 3) as usize;
            self.px[at..at + 3].copy_from_slice(&c);
        }
    }

    /// Fills x0..=x1 × y0..=y1 (in either order).
    fn rect(&mut self, x0: u32, y0: u32, x1: u32, y1: u32, c: Rgb) {
        let (x0, x1) = (x0.min(x1), x0.max(x1));
        let (y0, y1) = (y0.min(y1), y0.max(y1));
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.set(x, y, c);
            }
        }
    }

    fn dashed(&mut self, y: u32, c: Rgb) {
        for x in PLOT_LEFT..PLOT_RIGHT {
            if (x / 6) % 2 == 0 {
                self.set(x, y, c);
            }
        }
    }

    /// A filled triangle, its tip at (x, tip_y), `h` tall, opening down (pointing up) when
    /// `up`.
    fn triangle(&mut self, x: u32, tip_y: u32, h: u32, up: bool, c: Rgb) {
        for row in 0..h {
            let y = if up {
                tip_y.saturating_add(row)
            } else {
                tip_y.saturating_sub(row)
            };
            let half = row * 3 / 4;
            self.rect(x.saturating_sub(half), y, x + half, y, c);
        }
    }

    /// Digits, '-', '.', ':' and spaces in a 5×7 font at `scale`; anything else is a space.
    fn text(&mut self, x: u32, y: u32, text: &str, scale: u32, c: Rgb) {
        let mut cx = x;
        for ch in text.chars() {
            if let Some(rows) = glyph(ch) {
                for (r, bits) in rows.iter().enumerate() {
                    for col in 0..5u32 {
                        if bits & (0b10000 >> col) != 0 {
                            let px = cx + col * scale;
                            let py = y + r as u32 * scale;
                            self.rect(px, py, px + scale - 1, py + scale - 1, c);
                        }
                    }
                }
            }
            cx += 6 * scale;
        }
    }

    fn png(self) -> Result<Vec<u8>, ChartImageError> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, WIDTH, HEIGHT);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| ChartImageError::Encode(e.to_string()))?;
        writer
            .write_image_data(&self.px)
            .map_err(|e| ChartImageError::Encode(e.to_string()))?;
        writer
            .finish()
            .map_err(|e| ChartImageError::Encode(e.to_string()))?;
        Ok(out)
    }
}

/// A 5×7 glyph (each row's five bits, the leftmost first).
fn glyph(c: char) -> Option<[u8; 7]> {
    Some(match c {
        '0' => [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e],
        '1' => [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e],
        '2' => [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f],
        '3' => [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e],
        '4' => [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02],
        '5' => [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e],
        '6' => [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e],
        '7' => [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e],
        '9' => [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c],
        '-' => [0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c],
        ':' => [0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00],
        _ => return None,
    })
}

/// Draws the picture as a PNG of [`WIDTH`]×[`HEIGHT`]. Pure: the same picture, the same
/// bytes.
pub fn render_png(p: &ChartPicture) -> Result<Vec<u8>, ChartImageError> {
    if p.bars.is_empty() {
        return Err(ChartImageError::NoBars(p.code.clone()));
    }
    let mut c = Canvas::new();
    let scale = PriceScale::of(p);
    let n = p.bars.len();

    // Frame lines: the panels' edges.
    for y in [PRICE_TOP, PRICE_BOTTOM, VOLUME_TOP, VOLUME_BOTTOM] {
        c.rect(PLOT_LEFT, y, PLOT_RIGHT, y, GRID);
    }

    // The range lines under the candles.
    for (level, colour) in [(p.support, SUPPORT), (p.resistance, RESISTANCE)] {
        if let Some(level) = level.filter(|l| scale.contains(*l)) {
            c.dashed(scale.y(level), colour);
        }
    }

    let step = f64::from(PLOT_RIGHT - PLOT_LEFT) / n as f64;
    let half_body = ((step * 0.35).floor() as u32).clamp(1, 6);
    let max_volume = p.bars.iter().map(|b| b.volume).fold(0.0, f64::max);
    for (i, b) in p.bars.iter().enumerate() {
        draw_bar(&mut c, &scale, b, bar_center_x(n, i), half_body, max_volume);
    }

    for m in &p.marks {
        if let Some(i) = p.bars.iter().position(|b| b.date == m.date) {
            draw_mark(&mut c, &scale, &p.bars[i], m, bar_center_x(n, i));
        }
    }

    // Digits: code, last date, close; the scale's top and bottom.
    let close = p
        .last_close()
        .map(|x| format!("{x:.2}"))
        .unwrap_or_default();
    let header = format!("{}  {}  {close}", p.code, iso(p.last_date()));
    c.text(PLOT_LEFT, 12, &header, 2, INK);
    c.text(
        PLOT_RIGHT + 6,
        PRICE_TOP,
        &format!("{:.2}", scale.high),
        1,
        INK,
    );
    c.text(
        PLOT_RIGHT + 6,
        PRICE_BOTTOM - 7,
        &format!("{:.2}", scale.low),
        1,
        INK,
    );
    c.png()
}

fn draw_bar(c: &mut Canvas, s: &PriceScale, b: &PictureBar, x: u32, half: u32, max_volume: f64) {
    let colour = if b.is_up() { UP } else { DOWN };
    c.rect(x, s.y(b.high), x, s.y(b.low), colour);
    c.rect(x - half, s.y(b.open), x + half, s.y(b.close), colour);
    if max_volume > 0.0 && b.volume > 0.0 {
        let span = f64::from(VOLUME_BOTTOM - VOLUME_TOP - 2);
        let h = ((b.volume / max_volume) * span).round().max(1.0) as u32;
        c.rect(
            x - half,
            VOLUME_BOTTOM - 1 - h,
            x + half,
            VOLUME_BOTTOM - 1,
            colour,
        );
    }
}

/// How far a label's triangle sits from its bar, and how tall it is.
pub const MARK_GAP: u32 = 4;
pub const MARK_SIZE: u32 = 9;

fn draw_mark(c: &mut Canvas, s: &PriceScale, b: &PictureBar, m: &PictureMark, x: u32) {
    let colour = if m.superseded {
        SUPERSEDED
    } else if m.below {
        LOW_MARK
    } else {
        HIGH_MARK
    };
    if m.below {
        c.triangle(x, s.y(b.low) + MARK_GAP, MARK_SIZE, true, colour);
    } else {
        c.triangle(
            x,
            s.y(b.high).saturating_sub(MARK_GAP),
            MARK_SIZE,
            false,
            colour,
        );
    }
}

#[cfg(test)]
mod tests;
