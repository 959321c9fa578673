use super::*;
use crate::phases::tests::{OK, case};

fn event_marks(r: &Replay, code: EventCode) -> Vec<&KnownMark> {
    r.marks
        .iter()
        .filter(|k| matches!(k.mark, Mark::Event { event, schematic: SchematicKind::Accumulation, .. } if event == code))
        .collect()
}

#[test]
fn textbook_accumulation_marks_become_known_when_their_rules_can_see_them() {
    let c = case(&OK);
    let d = |i: usize| c.bars[i].date;
    let r = replay(&c.bars, &L4Config::default());

    // The climax is a fact of its own bar.
    let sc = event_marks(&r, EventCode::SC);
    assert_eq!(sc[0].known_on, d(c.sc));
    assert_eq!(sc[0].bar_date, d(c.sc));

    // The AR is the highest close so far after the climax: provisional ARs on the way up are
    // removed when a higher close takes the label, and the final one is known on its own bar.
    let ar = event_marks(&r, EventCode::AR);
    assert!(ar.len() > 1, "{ar:?}");
    for provisional in &ar[..ar.len() - 1] {
        assert!(
            matches!(provisional.ended, Some(MarkEnd::Removed { .. })),
            "{provisional:?}"
        );
    }
    let last = ar[ar.len() - 1];
    assert_eq!(
        (last.bar_date, last.known_on, last.since, last.ended),
        (d(c.ar), d(c.ar), d(c.ar), None)
    );

    // An ST is a swing low: known two bars after its own.
    let st = event_marks(&r, EventCode::ST);
    assert_eq!(st.len(), 1, "{st:?}");
    assert_eq!((st[0].bar_date, st[0].known_on), (d(c.st), d(c.st + 2)));

    // The spring reclaims support on its own bar; the SOS is its own bar; the LPS is a swing
    // low, known two bars later.
    let spring = event_marks(&r, EventCode::Spring);
    assert_eq!(spring[0].known_on, d(c.spring));
    let lps = event_marks(&r, EventCode::LPS);
    assert_eq!((lps[0].bar_date, lps[0].known_on), (d(c.lps), d(c.lps + 2)));

    // Phase B ran until the spring opened C: the open band was revised on the spring's day.
    let b_bands: Vec<&KnownMark> = r
        .marks
        .iter()
        .filter(|k| {
            matches!(
                k.mark,
                Mark::PhaseBand {
                    phase: Phase::B,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(b_bands[0].known_on, d(c.st + 2));
    assert_eq!(b_bands[0].ended, Some(MarkEnd::Revised { on: d(c.spring) }));
    // The closed band is the same band: first known when it opened, in this form since C.
    assert!(matches!(
        b_bands[1].mark,
        Mark::PhaseBand { until: Some(u), .. } if u == d(c.spring)
    ));
    assert_eq!(
        (b_bands[1].known_on, b_bands[1].since),
        (d(c.st + 2), d(c.spring))
    );
    assert_eq!(r.known_on(&b_bands[1].mark), Some(d(c.st + 2)));
}

#[test]
fn the_marks_known_on_a_date_are_the_ones_placed_from_its_bars_alone() {
    let c = case(&OK);
    let r = replay(&c.bars, &L4Config::default());
    for end in 1..=c.bars.len() {
        let date = c.bars[end - 1].date;
        let known: Vec<&Mark> = r
            .known_at(date)
            .filter(|k| !matches!(k.mark, Mark::Trigger { .. }))
            .map(|k| &k.mark)
            .collect();
        let alone = standing_marks(&c.bars[..end]);
        assert_eq!(known.len(), alone.len(), "as of {date}");
        assert!(alone.iter().all(|m| known.contains(&m)), "as of {date}");
    }
    assert!(r.marks.iter().all(|k| k.known_on >= k.bar_date));
}

#[test]
fn why_names_the_rule_and_the_supporting_days() {
    let m = Mark::Event {
        schematic: SchematicKind::Accumulation,
        event: EventCode::ST,
        date: 20200305,
        price: 12.75,
        dates: vec![20200305, 20200210],
    };
    assert!(m.why().starts_with("secondary test"), "{}", m.why());
    assert!(m.why().ends_with("(with 2020-02-10)"), "{}", m.why());
    assert!(
        m.why_zh().ends_with("（参照 2020-02-10）"),
        "{}",
        m.why_zh()
    );
    let t = Mark::Trigger {
        family: TriggerFamily::L4,
        trigger: TriggerKind::Spring,
        date: 20200305,
        score: 1.5,
        dates: vec![20200304, 20200305],
    };
    assert_eq!(t.bar_date(), 20200304);
    assert!(t.why().contains("score 1.50"), "{}", t.why());
}

#[test]
fn marks_serialise_as_tagged_objects() {
    let k = KnownMark {
        mark: Mark::PhaseBand {
            schematic: SchematicKind::Distribution,
            phase: Phase::C,
            from: 20200301,
            until: None,
        },
        bar_date: 20200301,
        known_on: 20200303,
        since: 20200305,
        ended: Some(MarkEnd::Revised { on: 20200310 }),
    };
    let v = serde_json::to_value(&k).expect("json");
    assert_eq!(v["mark"]["type"], "phase_band");
    assert_eq!(v["mark"]["schematic"], "distribution");
    assert_eq!(v["ended"]["type"], "revised");
    assert_eq!(v["ended"]["on"], 20200310);
}
