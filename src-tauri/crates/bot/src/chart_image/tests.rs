#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// `n` bars from 2026-01-05 on (dates only need to rise), alternating up and down days
/// around 10.00, volume growing with the index.
fn picture(n: usize, marks: Vec<PictureMark>) -> ChartPicture {
    let bars = (0..n)
        .map(|i| {
            let base = 10.0 + (i % 7) as f64 * 0.1;
            let (open, close) = if i % 2 == 0 {
                (base, base + 0.3)
            } else {
                (base + 0.3, base)
            };
            PictureBar {
                date: 20260105 + i as u32,
                open,
                high: base + 0.5,
                low: base - 0.2,
                close,
                volume: 1000.0 + i as f64 * 10.0,
            }
        })
        .collect();
    ChartPicture {
        code: "000001".into(),
        name: Some("平安银行".into()),
        bars,
        marks,
        support: Some(9.9),
        resistance: Some(10.9),
        schematic: Some("accumulation".into()),
        phase: Some("B".into()),
        data_status: "ok".into(),
    }
}

fn mark(label: &str, date: u32, below: bool, superseded: bool) -> PictureMark {
    PictureMark {
        label: label.into(),
        date,
        price: 10.0,
        below,
        superseded,
    }
}

struct Decoded {
    width: u32,
    height: u32,
    px: Vec<u8>,
}

impl Decoded {
    fn at(&self, x: u32, y: u32) -> Rgb {
        let i = ((y * self.width + x) * 3) as usize;
        [self.px[i], self.px[i + 1], self.px[i + 2]]
    }

    /// The rows of column `x` between `y0` and `y1` (inclusive) holding colour `c`.
    fn rows_with(&self, x: u32, y0: u32, y1: u32, c: Rgb) -> Vec<u32> {
        (y0..=y1).filter(|y| self.at(x, *y) == c).collect()
    }
}

fn decode(bytes: &[u8]) -> Decoded {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut px).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    px.truncate(info.buffer_size());
    Decoded {
        width: info.width,
        height: info.height,
        px,
    }
}

#[test]
fn up_days_are_red_and_down_days_green_at_their_bars_with_volume_under_them() {
    let p = picture(40, Vec::new());
    let img = decode(&render_png(&p).unwrap());
    assert_eq!((img.width, img.height), (WIDTH, HEIGHT));
    let scale = PriceScale::of(&p);
    for i in [0usize, 9, 10, 11, 39] {
        let b = &p.bars[i];
        let want = if i % 2 == 0 { UP } else { DOWN };
        let x = bar_center_x(p.bars.len(), i);
        let body = (scale.y(b.open) + scale.y(b.close)) / 2;
        assert_eq!(img.at(x, body), want, "bar {i}'s body at x {x}");
        // A body is wider than its wick: one pixel beside the centre is the same colour.
        assert_eq!(img.at(x + 1, body), want, "bar {i}'s body beside its wick");
        // The wick reaches the high, and nothing of the bar is above it.
        assert_eq!(img.at(x, scale.y(b.high)), want, "bar {i}'s high");
        assert_ne!(
            img.at(x, scale.y(b.high) - 2),
            want,
            "bar {i} above its high"
        );
        assert_eq!(img.at(x, VOLUME_BOTTOM - 2), want, "bar {i}'s volume");
    }
    // The newest bar (a down day) has the most volume: its bar reaches the panel's top;
    // the oldest one's does not.
    assert_eq!(img.at(bar_center_x(40, 39), VOLUME_TOP + 2), DOWN);
    assert_eq!(img.at(bar_center_x(40, 0), VOLUME_TOP + 2), BACKGROUND);
    // Between two bars: background.
    let gap = (bar_center_x(40, 10) + bar_center_x(40, 11)) / 2;
    assert_eq!(img.at(gap, scale.y(10.1)), BACKGROUND);
}

#[test]
fn a_label_is_drawn_at_its_bar_below_a_low_or_above_a_high() {
    let p = picture(
        40,
        vec![
            mark("SC", 20260105 + 20, true, false),
            mark("UTAD", 20260105 + 30, false, false),
            mark("ST", 20260105 + 5, true, true),
        ],
    );
    let img = decode(&render_png(&p).unwrap());
    let scale = PriceScale::of(&p);
    let n = p.bars.len();
    let below = |i: usize| {
        let y = scale.y(p.bars[i].low);
        (y + 1, y + MARK_GAP + MARK_SIZE)
    };
    let above = |i: usize| {
        let y = scale.y(p.bars[i].high);
        (y - MARK_GAP - MARK_SIZE, y - 1)
    };
    let (y0, y1) = below(20);
    assert!(
        !img.rows_with(bar_center_x(n, 20), y0, y1, LOW_MARK)
            .is_empty(),
        "SC under bar 20"
    );
    let (y0, y1) = above(30);
    assert!(
        !img.rows_with(bar_center_x(n, 30), y0, y1, HIGH_MARK)
            .is_empty(),
        "UTAD over bar 30"
    );
    let (y0, y1) = below(5);
    assert!(
        !img.rows_with(bar_center_x(n, 5), y0, y1, SUPERSEDED)
            .is_empty(),
        "the revised ST grey under bar 5"
    );
    // Bars without a label have none.
    for i in [4usize, 19, 21, 29, 31] {
        let x = bar_center_x(n, i);
        for c in [LOW_MARK, HIGH_MARK, SUPERSEDED] {
            assert!(
                img.rows_with(x, PRICE_TOP, PRICE_BOTTOM, c).is_empty(),
                "a mark at bar {i}"
            );
        }
    }
}

#[test]
fn the_range_lines_are_drawn_at_their_prices() {
    let p = picture(40, Vec::new());
    let img = decode(&render_png(&p).unwrap());
    let scale = PriceScale::of(&p);
    let row = |y: u32, c: Rgb| {
        (PLOT_LEFT..PLOT_RIGHT)
            .filter(|x| img.at(*x, y) == c)
            .count()
    };
    assert!(row(scale.y(9.9), SUPPORT) > 100, "the support line");
    assert!(row(scale.y(10.9), RESISTANCE) > 100, "the resistance line");
}

#[test]
fn no_bars_no_picture() {
    let p = picture(0, Vec::new());
    assert!(matches!(render_png(&p), Err(ChartImageError::NoBars(c)) if c == "000001"));
}

#[test]
fn one_flat_bar_still_draws() {
    let mut p = picture(1, Vec::new());
    p.bars[0] = PictureBar {
        date: 20260105,
        open: 5.0,
        high: 5.0,
        low: 5.0,
        close: 5.0,
        volume: 0.0,
    };
    p.support = None;
    p.resistance = None;
    let img = decode(&render_png(&p).unwrap());
    // A flat close counts as up (red), as on the stock page.
    assert_eq!(img.at(bar_center_x(1, 0), PriceScale::of(&p).y(5.0)), UP);
}

#[test]
fn the_caption_names_the_stock_the_last_bar_and_the_labels_within_the_limit() {
    let p = picture(
        40,
        vec![
            mark("SC", 20260110, true, false),
            mark("AR", 20260120, false, true),
        ],
    );
    let text = caption(&p);
    for want in [
        "000001 平安银行 日线 · 最后一根 2026-01-44",
        "收盘 10.40 · 近 40 个交易日",
        "区间：支撑 9.90 / 阻力 10.90",
        "结构：吸筹 阶段 B",
        "事件：SC 2026-01-10 · AR 2026-01-20（已修订）",
    ] {
        assert!(text.contains(want), "{want} not in {text}");
    }
    assert!(!text.contains("数据"), "{text}");

    // Many labels: the newest kept, the caption within Telegram's limit.
    let many: Vec<PictureMark> = (0..200)
        .map(|i| mark("ST", 20200101 + i, true, false))
        .collect();
    let mut p = picture(40, many);
    p.data_status = "stale".into();
    let text = caption(&p);
    assert!(
        text.chars().count() <= CAPTION_LIMIT,
        "{}",
        text.chars().count()
    );
    assert!(text.contains("ST 2020-03-00"), "the newest label: {text}");
    assert!(text.contains("更早的"), "{text}");
    assert!(text.contains("数据陈旧（stale）"), "{text}");
}

#[test]
fn only_analysing_one_stock_carries_a_chart() {
    let cases: [(BotCommand, Option<&str>); 7] = [
        (
            BotCommand::Analyze {
                code: "600519".into(),
            },
            Some("600519"),
        ),
        (BotCommand::Text("分析 000001".into()), Some("000001")),
        (BotCommand::Text("分析000001".into()), Some("000001")),
        (BotCommand::Text("分析 000001 和 600519".into()), None),
        (BotCommand::Text("分析 平安银行".into()), None),
        (BotCommand::Text("我的持仓".into()), None),
        (BotCommand::Screen, None),
    ];
    for (command, want) in cases {
        assert_eq!(chart_code(&command), want, "{command:?}");
    }
}

#[test]
fn no_chart_says_why() {
    let unknown = ChartError::UnknownCode {
        code: "999999".into(),
    };
    assert_eq!(
        no_chart_text("999999", &unknown),
        "没有 999999 的日线图：股票列表和本地缓存里都没有这个代码。"
    );
    let none = ChartError::NoData {
        code: "600000".into(),
        message: "offline".into(),
    };
    assert_eq!(
        no_chart_text("600000", &none),
        "没有 600000 的日线图：本地还没有它的日线数据（offline）。"
    );
}
