//! `seams draft-eval CASES_DIR` (ADR-0012's second layer: the regression
//! set, tracked as the leading indicator): every case runs through the
//! real drafting path with the configured provider, uncached, into a
//! scratch directory; the table says per case whether the draft was
//! accepted, in how many attempts, why it was rejected, which probes
//! rejected it and how long it took, and the totals.
//!
//! A case is a directory holding `case.toml`:
//!
//! ```toml
//! project = "../../../examples/chat"   # relative to the case directory
//! reference = "nav.html"               # in the case directory
//! name = "chat-nav"                    # the generator's name
//! expect = "accepted"                  # optional: or "rejected"
//! rejected_by = "rename"               # optional: the probe that must reject it
//! language = "python"                  # optional: rust (the default), python or js
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use crate::Language;
use crate::draft::{DraftError, DraftRequest, PROBE_REASON, draft_generator};
use seams_core::{Progress, Project};
use seams_runtime::Runtime;

/// A case could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The cases directory or a case file cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A `case.toml` is not what it should be.
    #[error("{}: {message}", path.display())]
    Case {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The directory holds no case.
    #[error("{}: no case (a directory with a case.toml) is in it", .0.display())]
    Empty(PathBuf),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    project: PathBuf,
    reference: PathBuf,
    name: String,
    expect: Option<Expect>,
    rejected_by: Option<String>,
    language: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Expect {
    Accepted,
    Rejected,
}

/// One case, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Its directory's name.
    pub name: String,
    /// The generator's name.
    pub generator: String,
    /// The project directory.
    pub project: PathBuf,
    /// The reference output.
    pub reference: PathBuf,
    /// Whether it should be accepted, if the case says.
    pub expect_accepted: Option<bool>,
    /// The probe that should reject it, if the case says.
    pub rejected_by: Option<String>,
    /// The language the extract step is asked in.
    pub language: Language,
}

/// The cases in `dir`, by name.
///
/// # Errors
///
/// An unreadable directory or case file, a case file that does not parse,
/// or no case at all.
pub fn read_cases(dir: &Path) -> Result<Vec<Case>, EvalError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| EvalError::Io { path, source }
    };
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let case_dir = entry.map_err(io(dir))?.path();
        let file = case_dir.join("case.toml");
        if !file.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(io(&file))?;
        let raw: CaseFile = toml::from_str(&text).map_err(|e| EvalError::Case {
            path: file.clone(),
            message: e.to_string(),
        })?;
        if raw.rejected_by.is_some() && raw.expect == Some(Expect::Accepted) {
            return Err(EvalError::Case {
                path: file,
                message: "rejected_by needs expect = \"rejected\" (or no expect)".into(),
            });
        }
        let language = match raw.language.as_deref() {
            None => Language::Rust,
            Some(name) => Language::from_name(name)
                .filter(|l| Language::DRAFTED.contains(l))
                .ok_or_else(|| EvalError::Case {
                    path: file.clone(),
                    message: format!(
                        "language {name:?} is not one drafts are written in: {}",
                        Language::DRAFTED.map(Language::name).join(", ")
                    ),
                })?,
        };
        cases.push(Case {
            name: case_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            generator: raw.name,
            project: case_dir.join(raw.project),
            reference: case_dir.join(raw.reference),
            expect_accepted: match (raw.expect, &raw.rejected_by) {
                (Some(e), _) => Some(e == Expect::Accepted),
                (None, Some(_)) => Some(false),
                (None, None) => None,
            },
            rejected_by: raw.rejected_by,
            language,
        });
    }
    if cases.is_empty() {
        return Err(EvalError::Empty(dir.to_owned()));
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

/// What one case gave.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case's name.
    pub case: String,
    /// The language of its extract step.
    pub language: Language,
    /// Whether the draft was accepted.
    pub accepted: bool,
    /// Attempts made.
    pub attempts: u32,
    /// Whether the last draft passed the four tests (before the probes).
    pub passed_tests: bool,
    /// The probes that rejected the last draft.
    pub failed_probes: Vec<String>,
    /// The last attempt's reasons, or the failure that stopped drafting.
    pub reasons: Vec<String>,
    /// How long it took.
    pub time: Duration,
    /// Whether it met the case's expectation; `None` when it has none.
    pub as_expected: Option<bool>,
}

/// Runs `case` in `project` with `request`'s provider settings; nothing
/// is cached, and an accepted draft's package is kept only in `keep`, as
/// `keep/<case>` (which must not exist yet).
pub fn run_case(
    project: &Project,
    runtime: &Runtime,
    case: &Case,
    request: &DraftRequest,
    keep: Option<&Path>,
    progress: &dyn Progress,
) -> CaseResult {
    let started = Instant::now();
    let scratch = tempfile::tempdir();
    let mut request = request.clone();
    request.name = case.generator.clone();
    request.reference = case.reference.clone();
    request.no_cache = true;
    request.eval_case = Some(case.name.clone());
    request.language = case.language;
    let mut sink = Vec::new();
    let outcome = match &scratch {
        Ok(scratch) => {
            request.out = Some(match keep {
                Some(keep) => keep.join(&case.name),
                None => scratch.path().join("package"),
            });
            draft_generator(project, runtime, &request, &mut sink, progress)
        }
        Err(e) => Err(DraftError::Io {
            path: std::env::temp_dir(),
            source: std::io::Error::new(e.kind(), e.to_string()),
        }),
    };
    let (accepted, attempts, reasons) = match outcome {
        Ok(report) => (true, report.attempts, Vec::new()),
        Err(DraftError::Rejected { attempts, reasons }) => (false, attempts, reasons),
        Err(other) => (false, 0, vec![other.to_string()]),
    };
    let failed_probes: Vec<String> = reasons
        .iter()
        .filter_map(|r| r.strip_prefix(PROBE_REASON)?.split_once(": "))
        .map(|(name, _)| name.to_owned())
        .collect();
    let passed_tests =
        accepted || (attempts > 0 && !reasons.is_empty() && reasons.len() == failed_probes.len());
    let as_expected = case.expect_accepted.map(|expected| {
        expected == accepted
            && case
                .rejected_by
                .as_ref()
                .is_none_or(|probe| failed_probes.contains(probe))
    });
    CaseResult {
        case: case.name.clone(),
        language: case.language,
        accepted,
        attempts,
        passed_tests,
        failed_probes,
        reasons,
        time: started.elapsed(),
        as_expected,
    }
}

/// The evaluation: every case's result and the totals.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    /// Per case, by name.
    pub results: Vec<CaseResult>,
}

impl EvalReport {
    /// Accepted cases over all.
    pub fn accepted(&self) -> (usize, usize) {
        (
            self.results.iter().filter(|r| r.accepted).count(),
            self.results.len(),
        )
    }

    /// The median number of attempts of the accepted cases.
    pub(crate) fn median_attempts(&self) -> Option<f64> {
        let mut attempts: Vec<u32> = self
            .results
            .iter()
            .filter(|r| r.accepted)
            .map(|r| r.attempts)
            .collect();
        attempts.sort_unstable();
        let n = attempts.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(f64::from(attempts[n / 2])),
            _ => Some(f64::from(attempts[n / 2 - 1] + attempts[n / 2]) / 2.0),
        }
    }

    /// Of the drafts that passed the four tests, those that also passed
    /// every probe (and so were accepted).
    pub(crate) fn probe_share(&self) -> (usize, usize) {
        let tested: Vec<&CaseResult> = self.results.iter().filter(|r| r.passed_tests).collect();
        (tested.iter().filter(|r| r.accepted).count(), tested.len())
    }

    /// Whether every case with an expectation met it.
    pub fn as_expected(&self) -> bool {
        self.results.iter().all(|r| r.as_expected != Some(false))
    }

    /// The table (columns aligned with spaces), then the totals.
    pub fn to_text(&self) -> String {
        let mut rows: Vec<[String; 7]> = vec![[
            "case".into(),
            "accepted".into(),
            "attempts".into(),
            "probes".into(),
            "time".into(),
            "expected".into(),
            "first reason".into(),
        ]];
        for r in &self.results {
            let probes = if r.accepted {
                "all passed".to_owned()
            } else if r.failed_probes.is_empty() {
                "-".to_owned()
            } else {
                format!("failed: {}", r.failed_probes.join(", "))
            };
            let first_reason = r
                .reasons
                .first()
                .map(|s| {
                    s.lines()
                        .next()
                        .unwrap_or_default()
                        .chars()
                        .take(120)
                        .collect::<String>()
                })
                .unwrap_or_default();
            rows.push([
                r.case.clone(),
                if r.accepted { "yes" } else { "no" }.into(),
                r.attempts.to_string(),
                probes,
                format!("{:.1} s", r.time.as_secs_f64()),
                match r.as_expected {
                    None => "-",
                    Some(true) => "yes",
                    Some(false) => "NO",
                }
                .into(),
                first_reason,
            ]);
        }
        let widths: Vec<usize> = (0..7)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        let (accepted, all) = self.accepted();
        let (probed, tested) = self.probe_share();
        out.push_str(&format!(
            "accepted within the retry cap: {accepted}/{all}\nmedian attempts (accepted): {}\naccepted among drafts that passed the four tests (every probe passed): {probed}/{tested}\n",
            self.median_attempts()
                .map_or_else(|| "-".to_owned(), |m| format!("{m}"))
        ));
        out
    }

    /// The cells of `case`'s row in [`EvalReport::to_text`], for tests.
    pub fn row_of(text: &str, case: &str) -> Option<Vec<String>> {
        text.lines()
            .find(|l| l.split("  ").next() == Some(case))
            .map(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
    }

    /// The JSON form of `--format json`.
    pub fn to_json(&self) -> serde_json::Value {
        let (accepted, all) = self.accepted();
        let (probed, tested) = self.probe_share();
        json!({
            "cases": self.results.iter().map(|r| json!({
                "case": r.case,
                "language": r.language.name(),
                "accepted": r.accepted,
                "attempts": r.attempts,
                "passed_tests": r.passed_tests,
                "failed_probes": r.failed_probes,
                "reasons": r.reasons,
                "seconds": r.time.as_secs_f64(),
                "as_expected": r.as_expected,
            })).collect::<Vec<_>>(),
            "totals": {
                "accepted": accepted,
                "cases": all,
                "median_attempts": self.median_attempts(),
                "passed_tests": tested,
                "passed_every_probe": probed,
                "as_expected": self.as_expected(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(case: &str, accepted: bool, attempts: u32, probes: &[&str]) -> CaseResult {
        CaseResult {
            case: case.into(),
            language: Language::Rust,
            accepted,
            attempts,
            passed_tests: accepted || !probes.is_empty(),
            failed_probes: probes.iter().map(|p| (*p).to_owned()).collect(),
            reasons: probes
                .iter()
                .map(|p| format!("{PROBE_REASON}{p}: x"))
                .collect(),
            time: Duration::from_millis(1500),
            as_expected: Some(true),
        }
    }

    #[test]
    fn the_totals_count_acceptance_attempts_and_the_probes_share() {
        let report = EvalReport {
            results: vec![
                result("a", true, 1, &[]),
                result("b", true, 3, &[]),
                result("c", false, 3, &["rename"]),
                result("d", false, 3, &[]),
            ],
        };
        assert_eq!(report.accepted(), (2, 4));
        assert_eq!(report.median_attempts(), Some(2.0));
        assert_eq!(report.probe_share(), (2, 3));
        let text = report.to_text();
        assert_eq!(
            EvalReport::row_of(&text, "c").unwrap(),
            [
                "c",
                "no",
                "3",
                "failed: rename",
                "1.5 s",
                "yes",
                "model probe rename: x"
            ]
        );
        assert!(text.ends_with("accepted within the retry cap: 2/4\nmedian attempts (accepted): 2\naccepted among drafts that passed the four tests (every probe passed): 2/3\n"), "{text}");
        assert_eq!(report.to_json()["totals"]["passed_every_probe"], 2);
    }

    #[test]
    fn cases_are_read_by_name_with_their_expectations() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("case.toml"), text).unwrap();
        };
        write(
            "b",
            "project = \"p\"\nreference = \"r.html\"\nname = \"b\"\nrejected_by = \"rename\"\n",
        );
        write(
            "a",
            "project = \"p\"\nreference = \"r.html\"\nname = \"a\"\nexpect = \"accepted\"\nlanguage = \"js\"\n",
        );
        std::fs::create_dir(dir.path().join("not-a-case")).unwrap();
        let cases = read_cases(dir.path()).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].name, "a");
        assert_eq!(cases[0].language, Language::Js);
        assert_eq!(cases[1].language, Language::Rust);
        assert_eq!(cases[0].expect_accepted, Some(true));
        assert_eq!(cases[1].expect_accepted, Some(false));
        assert_eq!(cases[1].project, dir.path().join("b").join("p"));
        write(
            "c",
            "project = \"p\"\nreference = \"r\"\nname = \"c\"\nexpect = \"accepted\"\nrejected_by = \"x\"\n",
        );
        assert!(
            read_cases(dir.path())
                .unwrap_err()
                .to_string()
                .contains("rejected_by needs")
        );
        write(
            "c",
            "project = \"p\"\nreference = \"r\"\nname = \"c\"\nlanguage = \"ruby\"\n",
        );
        let error = read_cases(dir.path()).unwrap_err().to_string();
        assert!(error.contains("c/case.toml"), "{error}");
        assert!(
            error.contains("language \"ruby\" is not one drafts are written in: rust, python, js"),
            "{error}"
        );
        write("c", "project = 1\n");
        assert!(
            read_cases(dir.path())
                .unwrap_err()
                .to_string()
                .contains("case.toml")
        );
        assert!(matches!(
            read_cases(&dir.path().join("not-a-case")),
            Err(EvalError::Empty(_))
        ));
    }
}
