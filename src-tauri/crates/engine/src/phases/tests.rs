use super::*;
use crate::indicators::test_support::dates;

pub(crate) struct Case {
    pub(crate) bars: Vec<Bar>,
    pub(crate) sc: usize,
    pub(crate) ar: usize,
    pub(crate) st: usize,
    pub(crate) spring: usize,
    pub(crate) sos: usize,
    pub(crate) lps: usize,
}

pub(crate) struct Knobs {
    sc_volume: f64,
    st_volume: f64,
    spring_low: f64,
    sos_volume: f64,
}

pub(crate) const OK: Knobs = Knobs {
    sc_volume: 4000.0,
    st_volume: 700.0,
    spring_low: 12.3,
    sos_volume: 3000.0,
};

/// A textbook accumulation: decline, SC, AR, range with an ST, Spring, SOS, LPS, markup.
pub(crate) fn case(k: &Knobs) -> Case {
    let mut v: Vec<(f64, f64, f64, f64, f64)> = Vec::new(); // o h l c vol
    let plain = |v: &mut Vec<_>, c: f64, vol: f64| v.push((c, c * 1.01, c * 0.99, c, vol));
    for i in 0..60 {
        plain(&mut v, 20.0 * 0.994f64.powi(i), 1000.0);
    }
    let sc = v.len();
    v.push((14.0, 14.05, 12.6, 12.75, k.sc_volume));
    for c in [13.0, 13.3, 13.6, 13.9, 14.1, 14.3, 14.2, 14.0] {
        plain(&mut v, c, 1500.0);
    }
    let ar = sc + 6;
    for j in 0..12 {
        plain(
            &mut v,
            13.7 + 0.4 * (j as f64 / 10.0 * std::f64::consts::TAU).sin(),
            800.0,
        );
    }
    let st = v.len();
    v.push((13.0, 13.1, 12.75, 12.9, k.st_volume));
    for j in 0..12 {
        plain(
            &mut v,
            13.7 + 0.4 * (j as f64 / 10.0 * std::f64::consts::TAU).sin(),
            800.0,
        );
    }
    let spring = v.len();
    v.push((13.0, 13.1, k.spring_low, 12.7, 900.0));
    for c in [13.3, 13.6, 13.9, 14.0, 14.1] {
        plain(&mut v, c, 800.0);
    }
    let sos = v.len();
    v.push((14.1, 15.1, 14.05, 15.0, k.sos_volume));
    plain(&mut v, 14.8, 900.0);
    plain(&mut v, 14.7, 800.0);
    let lps = v.len();
    plain(&mut v, 14.5, 700.0);
    for j in 0..14 {
        plain(&mut v, 14.9 + 0.15 * j as f64, 1000.0);
    }
    let ds = dates(v.len());
    let bars = v
        .iter()
        .zip(ds)
        .map(|(&(open, high, low, close, volume), date)| Bar {
            date,
            open,
            high,
            low,
            close,
            volume,
            amount: close * volume,
            turnover: None,
        })
        .collect();
    Case {
        bars,
        sc,
        ar,
        st,
        spring,
        sos,
        lps,
    }
}

fn acc(bars: &[Bar]) -> Option<Schematic> {
    wyckoff_structure(bars).accumulation
}

fn codes(s: &Schematic) -> Vec<EventCode> {
    s.events.iter().map(|e| e.event).collect()
}

#[test]
fn phase_a_after_sc_and_ar() {
    let c = case(&OK);
    let s = acc(&c.bars[..=c.ar + 2]).expect("schematic");
    assert_eq!(s.phase, Phase::A);
    assert_eq!(codes(&s), vec![EventCode::SC, EventCode::AR]);
    assert_eq!(s.events[0].date, c.bars[c.sc].date);
    assert_eq!(s.events[0].price, 12.6);
    assert_eq!(s.events[1].date, c.bars[c.ar].date);
    assert_eq!(
        s.events[1].dates,
        vec![c.bars[c.ar].date, c.bars[c.sc].date]
    );
    assert_eq!(s.support, Some(12.6));
    assert!((s.resistance.unwrap() - 14.3 * 1.01).abs() < 1e-9);
}

#[test]
fn phase_b_after_a_secondary_test() {
    let c = case(&OK);
    let s = acc(&c.bars[..=c.st + 2]).expect("schematic");
    assert_eq!(s.phase, Phase::B);
    assert_eq!(s.phase_since, c.bars[c.st].date);
    assert_eq!(codes(&s), vec![EventCode::SC, EventCode::AR, EventCode::ST]);
}

#[test]
fn phase_c_on_a_spring() {
    let c = case(&OK);
    let s = acc(&c.bars[..=c.spring + 1]).expect("schematic");
    assert_eq!(s.phase, Phase::C);
    assert!(codes(&s).contains(&EventCode::Spring));
}

#[test]
fn phase_d_on_sos_and_e_in_markup() {
    let c = case(&OK);
    let s = acc(&c.bars[..=c.sos]).expect("schematic");
    assert_eq!(s.phase, Phase::D);
    assert_eq!(s.phase_since, c.bars[c.sos].date);
    let s = acc(&c.bars).expect("schematic");
    assert_eq!(s.phase, Phase::E);
    assert_eq!(
        codes(&s),
        vec![
            EventCode::SC,
            EventCode::AR,
            EventCode::ST,
            EventCode::Spring,
            EventCode::SOS,
            EventCode::LPS
        ]
    );
    let lps = s.events.iter().find(|e| e.event == EventCode::LPS).unwrap();
    assert_eq!(lps.date, c.bars[c.lps].date);
    let st = wyckoff_structure(&c.bars);
    assert_eq!(st.active, Some(SchematicKind::Accumulation));
    assert_eq!(st.phase, Some(Phase::E));
}

#[test]
fn near_miss_sc_without_climactic_volume() {
    let c = case(&Knobs {
        sc_volume: 1800.0,
        ..OK
    });
    assert!(acc(&c.bars[..=c.ar + 2]).is_none());
}

#[test]
fn near_miss_st_on_heavy_volume_stays_in_phase_a() {
    let c = case(&Knobs {
        st_volume: 3000.0,
        ..OK
    });
    let s = acc(&c.bars[..=c.st + 2]).expect("schematic");
    assert_eq!(s.phase, Phase::A);
    assert!(!codes(&s).contains(&EventCode::ST));
}

#[test]
fn near_miss_spring_too_deep_is_not_a_spring() {
    let c = case(&Knobs {
        spring_low: 11.2,
        ..OK
    });
    let s = acc(&c.bars[..=c.spring + 1]).expect("schematic");
    assert_eq!(s.phase, Phase::B);
    assert!(!codes(&s).contains(&EventCode::Spring));
}

#[test]
fn near_miss_breakout_without_volume_is_not_sos() {
    let c = case(&Knobs {
        sos_volume: 1000.0,
        ..OK
    });
    let s = acc(&c.bars[..=c.sos]).expect("schematic");
    assert_eq!(s.phase, Phase::C);
}

#[test]
fn resumed_decline_invalidates_the_structure() {
    let mut c = case(&OK);
    let n = c.ar + 3;
    c.bars.truncate(n);
    let last = c.bars[n - 1];
    c.bars.push(Bar {
        close: 11.0,
        low: 10.9,
        open: 12.0,
        high: 12.0,
        date: last.date + 1,
        ..last
    });
    assert!(acc(&c.bars).is_none());
}

#[test]
fn distribution_is_the_mirror_image() {
    let c = case(&OK);
    let m = mirror(&c.bars).unwrap();
    let st = wyckoff_structure(&m);
    let d = st.distribution.expect("distribution");
    assert_eq!(d.kind, SchematicKind::Distribution);
    assert_eq!(d.phase, Phase::E);
    assert_eq!(
        codes(&d),
        vec![
            EventCode::BC,
            EventCode::AR,
            EventCode::ST,
            EventCode::UTAD,
            EventCode::SOW,
            EventCode::LPSY
        ]
    );
    // BC price is the top of the mirrored series = 1 / SC low.
    assert!((d.events[0].price - 1.0 / 12.6).abs() < 1e-9);
    assert!(d.resistance.unwrap() > d.support.unwrap());
}

#[test]
fn nothing_on_short_or_flat_tape() {
    assert_eq!(wyckoff_structure(&[]).active, None);
    let flat: Vec<Bar> = case(&OK)
        .bars
        .iter()
        .map(|b| Bar {
            open: 1.0,
            high: 1.0,
            low: 1.0,
            close: 1.0,
            ..*b
        })
        .collect();
    let st = wyckoff_structure(&flat);
    assert!(st.accumulation.is_none() && st.distribution.is_none());
}

#[test]
fn phase_e_start_stays_put_while_the_markup_lasts() {
    let c = case(&OK);
    let n = c.bars.len();
    let now = acc(&c.bars).expect("schematic");
    let day_before = acc(&c.bars[..n - 1]).expect("schematic");
    assert_eq!((now.phase, day_before.phase), (Phase::E, Phase::E));
    // Every close after the SOS is above resistance: E runs from the bar after it.
    assert_eq!(now.phase_since, c.bars[c.sos + 1].date);
    assert_eq!(day_before.phase_since, now.phase_since);
    let spans = now.phase_spans();
    let e = spans.last().expect("spans");
    assert_eq!(
        (e.phase, e.from, e.until),
        (Phase::E, now.phase_since, None)
    );
}
