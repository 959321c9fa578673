//! One stock's daily chart as a picture takes it (the chat bots send it as an image): the
//! last bars from the cache and the marks the stock page draws by default — every Wyckoff
//! label as the engine first placed it, a later revision or removal said — with the current
//! range lines. Everything comes from [`Desk::chart`], the stock page's one reading, so the
//! picture and the app never disagree; nothing here is computed anew.

use wyckoff_tools::chart::{ChartError, ChartEvent, Period, StockChart};

use crate::Desk;

/// How many trading days a picture shows (about half a year: enough for a range and its
/// events, few enough that each candle stays visible on a phone).
pub const PICTURE_BARS: usize = 120;

/// One daily bar as drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PictureBar {
    /// YYYYMMDD.
    pub date: u32,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    pub volume: f64,
}

impl PictureBar {
    /// A-share colours: a bar closing at or above its open is drawn red (up), below it green.
    pub fn is_up(&self) -> bool {
        self.close >= self.open
    }
}

/// Labels that mark a low (drawn below the bar, pointing up), as the stock page places them.
const LOW_LABELS: [&str; 5] = ["SC", "ST", "Spring", "SOS", "LPS"];

/// A Wyckoff label on one bar.
#[derive(Debug, Clone, PartialEq)]
pub struct PictureMark {
    /// SC, AR, ST, Spring, SOS, LPS, BC, UTAD, SOW, LPSY.
    pub label: String,
    /// The bar it labels (YYYYMMDD).
    pub date: u32,
    pub price: f64,
    /// Below the bar (a low: accumulation's events, a distribution's AR); above otherwise.
    pub below: bool,
    /// A later bar revised or removed the label as first placed (the page draws it grey).
    pub superseded: bool,
}

/// What a chart picture shows, all of it from the cache and the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartPicture {
    /// Six digits.
    pub code: String,
    pub name: Option<String>,
    /// Oldest first; never empty.
    pub bars: Vec<PictureBar>,
    /// The labels on the bars shown, oldest first.
    pub marks: Vec<PictureMark>,
    /// The current schematic's range lines.
    pub support: Option<f64>,
    pub resistance: Option<f64>,
    /// `accumulation` or `distribution`, when a schematic is active.
    pub schematic: Option<String>,
    /// A–E.
    pub phase: Option<String>,
    /// ok, stale, partial or unavailable (as the stock page says it).
    pub data_status: String,
}

impl ChartPicture {
    /// The newest bar's date: how fresh the picture is.
    pub fn last_date(&self) -> u32 {
        self.bars.last().map_or(0, |b| b.date)
    }

    /// The newest close.
    pub fn last_close(&self) -> Option<f64> {
        self.bars.last().map(|b| b.close)
    }
}

impl Desk {
    /// `code`'s daily chart picture from the cached bars (no fetch beyond what the stock
    /// page does): the last [`PICTURE_BARS`] days with their marks. An unknown code or a
    /// stock without any cached bar is the stock page's error, which says which.
    pub async fn chart_picture(&self, code: &str) -> Result<ChartPicture, ChartError> {
        let chart = self.chart(code, Period::Day, None).await?;
        picture_of(&chart, PICTURE_BARS)
    }
}

/// The last `keep` daily bars of a stock page and the labels on them.
pub fn picture_of(chart: &StockChart, keep: usize) -> Result<ChartPicture, ChartError> {
    let b = &chart.bars;
    let n = b.dates.len();
    let columns_agree = [&b.open, &b.high, &b.low, &b.close, &b.volume]
        .iter()
        .all(|c| c.len() == n);
    if n == 0 || !columns_agree {
        return Err(ChartError::NoData {
            code: chart.code.clone(),
            message: "the stock page has no daily bars to draw".into(),
        });
    }
    let from = n.saturating_sub(keep.max(1));
    let bars: Vec<PictureBar> = (from..n)
        .map(|i| PictureBar {
            date: b.dates[i],
            open: b.open[i],
            high: b.high[i],
            low: b.low[i],
            close: b.close[i],
            volume: b.volume[i],
        })
        .collect();
    let first = bars.first().map_or(0, |x| x.date);
    let reading = &chart.reading;
    let distribution = reading.schematic.as_deref() == Some("distribution");
    let marks = reading
        .known_events
        .iter()
        .filter(|e| e.bar_date >= first)
        .map(|e| mark(e, distribution))
        .collect();
    Ok(ChartPicture {
        code: chart.code.clone(),
        name: chart.name.clone(),
        bars,
        marks,
        support: reading.support,
        resistance: reading.resistance,
        schematic: reading.schematic.clone(),
        phase: reading.phase.clone(),
        data_status: chart.data_status.clone(),
    })
}

fn mark(e: &ChartEvent, distribution: bool) -> PictureMark {
    PictureMark {
        below: LOW_LABELS.contains(&e.label.as_str()) || (e.label == "AR" && distribution),
        label: e.label.clone(),
        date: e.bar_date,
        price: e.price,
        superseded: e.ended.is_some(),
    }
}
