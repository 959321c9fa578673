#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_session::domain::market::{LineProblem, NamesImportStatus};

use super::*;
use crate::commands::error::CommandErrorKind;
use crate::commands::test_desk;

#[tokio::test]
async fn a_names_file_imports_once_and_the_stock_shows_its_names() {
    let home = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(home.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("names.csv");
    std::fs::write(
        &file,
        "date,code,name\n1990-12-10,000005,世纪星源\n20210501,000005.SZ,ST星源\n",
    )
    .unwrap();
    let path = format!("  {}  ", file.display());

    let first = import(&desk, &path).await.unwrap();
    let NamesImportStatus::Imported {
        rows,
        stocks,
        write,
    } = first.status
    else {
        panic!("{first:?}");
    };
    assert_eq!((rows, stocks, write.added, write.unchanged), (2, 1, 2, 0));
    // the same file again adds nothing, and the report says what was already there
    let again = import(&desk, &path).await.unwrap();
    let NamesImportStatus::Imported { write, .. } = again.status else {
        panic!("{again:?}");
    };
    assert_eq!((write.added, write.unchanged), (0, 2));

    let h = desk.name_history("sz000005").await.unwrap();
    let spans: Vec<(u32, &str, bool)> = h
        .spans
        .iter()
        .map(|s| (s.from, s.name.as_str(), s.first_seen))
        .collect();
    assert_eq!(
        spans,
        [(19901210, "世纪星源", false), (20210501, "ST星源", false)]
    );
    let counts = desk.history_counts().await.unwrap();
    assert_eq!((counts.codes_with_names, counts.spans), (1, 2));
    // the IPC shape the page reads: the status and the write's counts side by side
    let v = serde_json::to_value(import(&desk, &path).await.unwrap()).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["unchanged"].as_u64()),
        (Some("imported"), Some(2))
    );
}

#[tokio::test]
async fn a_file_with_bad_lines_is_a_report_naming_them_and_stores_nothing() {
    let home = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(home.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.csv");
    std::fs::write(&file, "20200101,000001,平安银行\n2020-02-30,000002,万科A\n").unwrap();
    let report = import(&desk, file.to_str().unwrap()).await.unwrap();
    let NamesImportStatus::Rejected { errors, bad_lines } = &report.status else {
        panic!("{report:?}");
    };
    assert_eq!(*bad_lines, 1);
    assert_eq!(errors[0].line, 2);
    assert_eq!(
        errors[0].problem,
        LineProblem::BadDate {
            value: "2020-02-30".into()
        }
    );
    assert!(desk.name_history("000001").await.unwrap().spans.is_empty());
}

#[tokio::test]
async fn no_path_a_missing_file_or_a_folder_is_refused_as_input() {
    let home = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(home.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    for (path, want) in [
        ("   ".to_owned(), "date,code,name"),
        (missing.display().to_string(), "missing.csv"),
        (dir.path().display().to_string(), "is a folder"),
    ] {
        let e = import(&desk, &path).await.unwrap_err();
        assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
        assert!(e.message.contains(want), "{path}: {}", e.message);
    }
    let e = CommandError::from(desk.name_history("12345").await.unwrap_err());
    assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
}
