//! `report.html` and the JUnit file of a fixed run folder (`tests/data/runs/report-mini`: the
//! mini pack's stations with a variant that stops reporting the reading in `lookup` and calls
//! the tool for small talk once, with `<`, `&` and quotes in its transcripts): the page's data
//! block and the JUnit document as snapshots, the page's structure through an HTML5 parser, and
//! the page in headless Chromium, offline, with no console output.
//!
//! The browser test is skipped, saying so, only when no Chromium is found and
//! `SKILLEVAL_REQUIRE_BROWSER` is unset; `scripts/setup.sh --model all` installs it and the
//! README's test command sets the variable.

use std::path::{Path, PathBuf};
use std::process::Command;

use scraper::{Html, Selector};
use skilleval::eval::record;
use skilleval::eval::report::files::settings_of;
use skilleval::eval::report::{html, junit};
use skilleval::eval::run_summary;
use skilleval::eval::stats::Summary;

/// The fixed run folder's files, in a temporary folder of its own.
fn fixed_run() -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("report-mini");
    std::fs::create_dir(&dir).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/runs/report-mini");
    for name in ["journal.jsonl", "manifest.json", "profile.json"] {
        std::fs::copy(source.join(name), dir.join(name)).unwrap();
    }
    (temp, dir)
}

fn record_and_summary() -> (tempfile::TempDir, record::RunRecord, Summary) {
    let (temp, dir) = fixed_run();
    let record = record::load(&dir).unwrap();
    assert_eq!(
        record.prompts_note, None,
        "the corpus is found and unchanged"
    );
    let summary = run_summary::of_record(&record).unwrap();
    (temp, record, summary)
}

fn page() -> String {
    let (_temp, record, summary) = record_and_summary();
    html::render(&record, &summary, &settings_of(&record))
}

fn select<'a>(document: &'a Html, selector: &str) -> Vec<scraper::ElementRef<'a>> {
    document
        .select(&Selector::parse(selector).unwrap())
        .collect()
}

#[test]
fn the_data_block_holds_rows_pairs_manifest_and_profile() {
    let document = Html::parse_document(&page());
    let block = select(&document, "script#data[type=\"application/json\"]");
    assert_eq!(block.len(), 1);
    let text: String = block[0].text().collect();
    let data: serde_json::Value = serde_json::from_str(&text).unwrap();
    insta::assert_json_snapshot!("html_data", data);
}

#[test]
fn the_junit_file_has_a_case_per_category_and_law_and_fails_the_worse() {
    let (_temp, record, summary) = record_and_summary();
    let text = junit::junit(&summary, &record.manifest.run_id);
    insta::assert_snapshot!("junit", text);
    // lookup got worse, and with it the total and the law the variant broke.
    assert_eq!(text.matches("<failure ").count(), 3, "{text}");
}

#[test]
fn the_page_parses_cleanly_with_a_plot_mark_per_category_and_panes_per_pair() {
    let page = page();
    let document = Html::parse_document(&page);
    assert!(
        document.errors.is_empty(),
        "HTML parse errors: {:?}",
        document.errors
    );
    let (_temp, record, summary) = record_and_summary();
    let comparisons: Vec<_> = summary
        .skill_effect
        .iter()
        .chain([&summary.wording])
        .collect();
    // A plot per category table and per law table of each comparison.
    assert_eq!(select(&document, "svg.forest").len(), 2 * comparisons.len());
    for comparison in &comparisons {
        let section = format!("section#{}", comparison.name);
        let marks = select(
            &document,
            &format!("{section} svg.forest circle.mark[data-kind=\"category\"]"),
        );
        let names: Vec<&str> = marks
            .iter()
            .map(|m| m.value().attr("data-name").unwrap())
            .collect();
        let categories: Vec<&str> = comparison
            .categories
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, categories, "{section}");
        let total = select(
            &document,
            &format!("{section} circle.mark[data-kind=\"total\"]"),
        );
        assert_eq!(total.len(), 1);
        let laws = select(
            &document,
            &format!("{section} circle.mark[data-kind=\"law\"]"),
        );
        assert_eq!(laws.len(), comparison.laws.len());
    }
    let worse: Vec<&str> = select(
        &document,
        "section#wording circle.mark[data-verdict=\"worse\"]",
    )
    .iter()
    .map(|m| m.value().attr("data-name").unwrap())
    .collect();
    assert_eq!(worse, ["lookup", "total", "reports-the-reading"]);

    // Two panes for each pair whose arms disagree, the failed laws marked.
    let (pairs, _) = skilleval::eval::report::pairs::differing(&record, &summary);
    let articles = select(&document, "article.pair");
    assert_eq!(articles.len(), pairs.len());
    assert!(pairs.iter().any(|p| p.comparison == "wording"));
    assert!(pairs.iter().any(|p| p.comparison == "skill_effect"));
    assert_eq!(
        select(&document, "article.pair div.pane").len(),
        2 * pairs.len()
    );
    assert_eq!(
        select(&document, "article.pair div.prompt").len(),
        pairs.len()
    );
    assert!(!select(&document, "div.pane span.law.failed").is_empty());
    for filter in ["comparison", "category", "law", "verdict"] {
        assert_eq!(
            select(&document, &format!("select#filter-{filter}")).len(),
            1
        );
    }

    // The transcripts' markup is text: the only scripts are the page's own two.
    assert_eq!(select(&document, "script").len(), 2);
    let replies: String = select(&document, "div.reply pre")
        .iter()
        .flat_map(|p| p.text())
        .collect();
    assert!(
        replies.contains("</pre><script>alert(1)</script> nothing & no \"station\"."),
        "{replies}"
    );
    assert!(page.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn the_page_loads_nothing_from_outside() {
    let document = Html::parse_document(&page());
    for element in select(&document, "*") {
        for (name, value) in element.value().attrs() {
            let reaches_out = match name {
                "src" | "srcset" | "action" | "poster" => true,
                "href" => !value.starts_with('#'),
                _ => false,
            };
            assert!(
                !reaches_out,
                "<{} {name}=\"{value}\">",
                element.value().name()
            );
        }
    }
    assert!(select(&document, "link, iframe, img, object, embed").is_empty());
    let style: String = select(&document, "style")
        .iter()
        .flat_map(|s| s.text())
        .collect();
    assert!(!style.contains("url(") && !style.contains("@import"));
}

#[test]
fn the_report_command_rebuilds_the_same_page_and_markdown() {
    let (_temp, dir) = fixed_run();
    let junit = dir.join("junit.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .arg("report")
        .arg(&dir)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_temp2, record, summary) = record_and_summary();
    let written = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let (_, page) = skilleval::eval::report::files::render(
        &record,
        &summary,
        &skilleval::eval::report::files::settings_of(&record),
    );
    assert_eq!(written, page);
    let markdown = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        markdown.starts_with("# skilleval: mini\n\n**Wording: Worse: lookup -88"),
        "{markdown}"
    );
    // The headline and the changed categories come first; the full tables are folded.
    let (head, folded) = markdown.split_once("<details>").unwrap();
    assert!(head.contains("| lookup | 12 |"), "{head}");
    assert!(!head.contains("| chitchat |"), "{head}");
    assert!(folded.contains("| chitchat |") && folded.contains("</details>"));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml, junit::junit(&summary, "report-mini"));
}

/// The fixed run folder's journal, its lines as JSON.
fn journal_lines(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Whether `law` held in a journal line, as the statistics count a law row: it held unless it
/// failed or the run errored.
fn law_held(entry: &serde_json::Value, law: &str) -> bool {
    let failed = entry["judgement"]["failed"].as_array().unwrap();
    !entry["errored"].as_bool().unwrap() && !failed.iter().any(|l| l == law)
}

/// The share of a line's applied laws that held, as the statistics grade a run.
fn held_share(entry: &serde_json::Value) -> f64 {
    let applied = entry["judgement"]["applied_laws"].as_array().unwrap();
    if entry["errored"].as_bool().unwrap() {
        return 0.0;
    }
    let held = applied
        .iter()
        .filter(|l| law_held(entry, l.as_str().unwrap()))
        .count();
    held as f64 / applied.len() as f64
}

fn scored_pass(entry: &serde_json::Value) -> bool {
    entry["judgement"]["passed"].as_bool().unwrap() && !entry["errored"].as_bool().unwrap()
}

/// (sample, repeat) of each pair of `comparison` the page shows that backs `row` (`category`
/// or `law`, by `name`).
fn shown_pairs(document: &Html, comparison: &str, row: &str, name: &str) -> Vec<(String, u64)> {
    let mut shown: Vec<(String, u64)> = select(
        document,
        &format!("article.pair[data-comparison=\"{comparison}\"]"),
    )
    .into_iter()
    .filter(|a| match row {
        "category" => {
            a.value().attr("data-category") == Some(name)
                && a.value().attr("data-backs-category") == Some("true")
        }
        _ => {
            let laws: Vec<String> =
                serde_json::from_str(a.value().attr("data-laws").unwrap()).unwrap();
            laws.iter().any(|l| l == name)
        }
    })
    .map(|a| {
        let heading: String = a
            .select(&Selector::parse("h3").unwrap())
            .next()
            .unwrap()
            .text()
            .collect();
        let sample: String = a
            .select(&Selector::parse("h3 code").unwrap())
            .next()
            .unwrap()
            .text()
            .collect();
        let repeat = heading
            .split("repeat ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap();
        (sample, repeat)
    })
    .collect();
    shown.sort();
    shown
}

/// The pair count a row of `comparison`'s tables links to, 0 where it links nowhere.
fn link_count(document: &Html, comparison: &str, filter: &str) -> usize {
    let links = select(
        document,
        &format!("section#{comparison} a.pairs-link[data-comparison=\"{comparison}\"]{filter}"),
    );
    assert!(links.len() <= 1, "one link per row");
    links
        .first()
        .map_or(0, |a| a.text().collect::<String>().parse().unwrap())
}

/// (sample, repeat) of every pair of the journal whose two arms' outcomes for a row differ.
fn differing_in_journal(
    lines: &[serde_json::Value],
    (reference, treatment): (&str, &str),
    differs: impl Fn(&serde_json::Value, &serde_json::Value) -> bool,
) -> Vec<(String, u64)> {
    let mut by_pair: std::collections::BTreeMap<(String, u64), Vec<&serde_json::Value>> =
        Default::default();
    for line in lines {
        let key = (
            line["sample_id"].as_str().unwrap().to_string(),
            line["repeat"].as_u64().unwrap(),
        );
        by_pair.entry(key).or_default().push(line);
    }
    by_pair
        .into_iter()
        .filter(|(_, arms)| {
            let arm = |name: &str| arms.iter().find(|l| l["arm"] == name).copied();
            match (arm(reference), arm(treatment)) {
                (Some(r), Some(t)) => differs(r, t),
                _ => false,
            }
        })
        .map(|(key, _)| key)
        .collect()
}

/// Checks that every category and law row of both comparisons is backed on the page by the
/// pairs whose outcome for that row differs between its arms, gapped pairs included.
fn assert_every_row_backed(dir: &Path, page: &str) {
    let document = Html::parse_document(page);
    let lines = journal_lines(dir);
    let record = record::load(dir).unwrap();
    let summary = run_summary::of_record(&record).unwrap();
    let comparisons = [
        ("wording", ("baseline", "variant"), &summary.wording),
        (
            "skill_effect",
            ("control", "baseline"),
            summary.skill_effect.as_ref().unwrap(),
        ),
    ];
    for (name, arms, comparison) in comparisons {
        for law in &comparison.laws {
            let expected = differing_in_journal(&lines, arms, |r, t| {
                law_held(r, &law.name) != law_held(t, &law.name)
            });
            assert_eq!(
                shown_pairs(&document, name, "law", &law.name),
                expected,
                "{name}: law {} ({})",
                law.name,
                law.verdict_label()
            );
            assert_eq!(
                link_count(&document, name, &format!("[data-law=\"{}\"]", law.name)),
                expected.len(),
                "{name}: law {}",
                law.name
            );
        }
        for category in &comparison.categories {
            let expected: Vec<(String, u64)> = differing_in_journal(&lines, arms, |r, t| {
                r["category"] == category.name.as_str()
                    && (scored_pass(r) != scored_pass(t) || held_share(r) != held_share(t))
            });
            assert_eq!(
                shown_pairs(&document, name, "category", &category.name),
                expected,
                "{name}: category {}",
                category.name
            );
            assert_eq!(
                link_count(
                    &document,
                    name,
                    &format!("[data-category=\"{}\"]", category.name)
                ),
                expected.len(),
                "{name}: category {}",
                category.name
            );
        }
    }
}

#[test]
fn every_verdict_row_is_backed_by_the_pairs_whose_outcome_for_it_differs() {
    let (_temp, dir) = fixed_run();
    let page = page();
    assert_every_row_backed(&dir, &page);
    // The one gapped pair (lookup-12, repeat 1, a gap on the variant's side) is scored in the
    // statistics, so it is shown, marked, and the page says so.
    let document = Html::parse_document(&page);
    assert_eq!(select(&document, "article.pair div.pane.gapped").len(), 1);
    let section: String = select(&document, "section#samples > p")
        .iter()
        .flat_map(|p| p.text())
        .collect();
    assert!(!section.contains("left out"), "{section}");
    assert!(section.contains("scored as judged"), "{section}");
}

#[test]
fn a_pair_whose_laws_differ_but_not_its_pass_is_shown_under_each_law() {
    let (_temp, dir) = fixed_run();
    // messy-01, repeat 0: control and baseline both fail, each on another law.
    let lines: Vec<String> = journal_lines(&dir)
        .into_iter()
        .map(|mut line| {
            let (sample, repeat) = (line["sample_id"].clone(), line["repeat"].clone());
            if sample == "messy-01" && repeat == 0 {
                let failed = match line["arm"].as_str().unwrap() {
                    "control" => Some("asks-for-the-named-station"),
                    "baseline" => Some("reports-the-reading"),
                    _ => None,
                };
                if let Some(law) = failed {
                    line["judgement"]["passed"] = false.into();
                    line["judgement"]["failed"] = serde_json::json!([law]);
                }
            }
            line.to_string()
        })
        .collect();
    std::fs::write(dir.join("journal.jsonl"), lines.join("\n") + "\n").unwrap();
    let record = record::load(&dir).unwrap();
    let summary = run_summary::of_record(&record).unwrap();
    let page = html::render(&record, &summary, &settings_of(&record));
    let document = Html::parse_document(&page);
    for law in ["asks-for-the-named-station", "reports-the-reading"] {
        assert!(
            shown_pairs(&document, "skill_effect", "law", law)
                .contains(&("messy-01".to_string(), 0)),
            "{law}"
        );
    }
    assert_every_row_backed(&dir, &page);
}

/// The Chromium to drive: `$SKILLEVAL_CHROMIUM`, else the first of the usual names on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SKILLEVAL_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| {
            ["chromium", "chromium-browser", "google-chrome"].map(|name| dir.join(name))
        })
        .find(|candidate| candidate.is_file())
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_page_renders_in_headless_chromium_offline_without_console_output() {
    let Some(browser) = chromium() else {
        if std::env::var_os("SKILLEVAL_REQUIRE_BROWSER").is_some() {
            panic!("SKILLEVAL_REQUIRE_BROWSER is set and no Chromium was found: run scripts/setup.sh --model all, or set SKILLEVAL_CHROMIUM");
        }
        eprintln!("skipped: no Chromium found (install chromium, or set SKILLEVAL_CHROMIUM); set SKILLEVAL_REQUIRE_BROWSER=1 to make this a failure");
        return;
    };
    let (temp, dir) = fixed_run();
    let (_temp2, record, summary) = record_and_summary();
    let page = dir.join("report.html");
    std::fs::write(
        &page,
        html::render(&record, &summary, &settings_of(&record)),
    )
    .unwrap();
    let profile = temp.path().join("chromium-profile");
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // Offline: every host resolves to nothing and every proxy connection is refused.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("{}: cannot start: {e}", browser.display()));
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {log}", browser.display());
    // Every console message of the page (errors and uncaught exceptions included) is logged
    // as CONSOLE; the page logs nothing when it renders.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console output: {console:#?}");
    let rendered = Html::parse_document(&dom);
    let body = select(&rendered, "body");
    assert_eq!(
        body[0].value().attr("data-rendered"),
        Some("ok"),
        "the page's script did not finish: {log}"
    );
    let (pairs, _) = skilleval::eval::report::pairs::differing(&record, &summary);
    assert!(!select(&rendered, "svg.forest circle.mark").is_empty());
    assert_eq!(
        select(&rendered, "article.pair div.pane").len(),
        2 * pairs.len()
    );
    let shown: String = select(&rendered, "output#shown")[0].text().collect();
    assert_eq!(shown, format!("{0} of {0} pair(s) shown", pairs.len()));
}

#[test]
fn a_run_folder_without_its_manifest_is_named_in_one_line() {
    let (_temp, dir) = fixed_run();
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .arg("report")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: cannot read",
            dir.join("manifest.json").display()
        )),
        "{stderr}"
    );
}
