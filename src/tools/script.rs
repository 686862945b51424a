//! A skill's Python script as a tool: its argparse parser read by Python itself (the script's
//! `get_args()`, asked through a small shim), made a description (the parser's help) and an
//! argument schema, and a call's arguments made the script's command line.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::command::{CommandAnswer, CommandTool};

/// The interpreter a skill's Python scripts run under, found on `PATH`.
pub const PYTHON: &str = "python3";

/// Python's flag that writes no `__pycache__` beside the scripts it imports.
pub const NO_BYTECODE: &str = "-B";

/// Printed before the shim's answer, so that whatever the script prints as it is imported is
/// not read as the answer.
const MARKER: &str = "@@skilleval-script-interface@@";

/// Imports the script (not as `__main__`), calls its `get_args()` and prints, after the
/// marker, the parser's help and its arguments as JSON; any failure is printed as `error`.
const SHIM: &str = r#"
import argparse, importlib.util, json, os, sys
# Nothing is written beside the script (no __pycache__ in the skill's folder).
sys.dont_write_bytecode = True
MARKER = "@@skilleval-script-interface@@"
def done(answer):
    print("\n" + MARKER + json.dumps(answer))
    sys.exit(0)
path = sys.argv[1]
# The help's width, fixed so that the description does not depend on a terminal.
os.environ["COLUMNS"] = "100"
sys.argv = [os.path.basename(path)]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
try:
    spec = importlib.util.spec_from_file_location("skill_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
except BaseException as e:
    done({"error": "importing it failed: %s: %s" % (type(e).__name__, e)})
get_args = getattr(module, "get_args", None)
if not callable(get_args):
    done({"error": "it has no get_args() returning an argparse.ArgumentParser"})
try:
    parser = get_args()
except BaseException as e:
    done({"error": "get_args() failed: %s: %s" % (type(e).__name__, e)})
if not isinstance(parser, argparse.ArgumentParser):
    done({"error": "get_args() returned %s, not an argparse.ArgumentParser" % type(parser).__name__})
KINDS = {argparse._StoreAction: "value", argparse._StoreTrueAction: "true",
         argparse._StoreFalseAction: "false", argparse._CountAction: "count",
         argparse._AppendAction: "append"}
def plain(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return None
arguments = []
for action in parser._actions:
    if isinstance(action, (argparse._HelpAction, argparse._VersionAction)) or action.help == argparse.SUPPRESS:
        continue
    kind = KINDS.get(type(action))
    if kind is None:
        done({"error": "argument %r: argparse action %s is not one skilleval can call (it takes store, store_true, store_false, count and append)" % (action.dest, type(action).__name__)})
    kind_of = {int: "integer", float: "number"}.get(action.type, "string")
    text = action.help or ""
    try:
        text = text % dict(vars(action), prog=parser.prog)
    except Exception:
        pass
    longest = sorted(action.option_strings, key=len)[-1] if action.option_strings else None
    arguments.append({
        "dest": action.dest, "flag": longest, "kind": kind, "type": kind_of,
        "nargs": action.nargs if isinstance(action.nargs, (int, str)) else None,
        "required": bool(action.required), "help": text,
        "choices": plain(list(action.choices)) if action.choices is not None else None,
    })
done({"help": parser.format_help(), "arguments": arguments})
"#;

/// One argument of a script's parser, as the shim reports it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptArgument {
    /// The name the parsed value gets, and the call's argument name.
    pub dest: String,
    /// The option's longest spelling (`--from-currency`); none for a positional argument.
    pub flag: Option<String>,
    /// `value`, `true` (store_true), `false` (store_false), `count` or `append`.
    pub kind: String,
    /// `string`, `integer` or `number`: the JSON type of one value.
    #[serde(rename = "type")]
    pub value_type: String,
    /// argparse's `nargs` as given: a count, or `?`, `*`, `+`; none for one value.
    pub nargs: Option<Value>,
    pub required: bool,
    pub help: String,
    pub choices: Option<Vec<Value>>,
}

/// What the script offers the model, read from its parser.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptInterface {
    /// The parser's help (`--help`), the description the model reads.
    pub help: String,
    pub arguments: Vec<ScriptArgument>,
}

#[derive(Deserialize)]
struct ShimAnswer {
    error: Option<String>,
    #[serde(flatten)]
    interface: Option<ScriptInterface>,
}

impl ScriptArgument {
    /// Whether the call passes a list here (several values on the command line).
    fn takes_list(&self) -> bool {
        self.kind == "append"
            || match &self.nargs {
                Some(Value::String(n)) => n == "*" || n == "+",
                Some(Value::Number(n)) => n.as_u64() != Some(1),
                _ => false,
            }
    }

    fn schema(&self) -> Value {
        let one = json!({ "type": self.value_type });
        let mut schema = match self.kind.as_str() {
            "true" | "false" => json!({ "type": "boolean" }),
            "count" => json!({ "type": "integer" }),
            _ if self.takes_list() => json!({ "type": "array", "items": one }),
            _ => one,
        };
        if let (Some(choices), false) = (&self.choices, self.takes_list()) {
            schema["enum"] = Value::Array(choices.clone());
        }
        if !self.help.trim().is_empty() {
            schema["description"] = Value::String(self.help.trim().to_string());
        }
        schema
    }
}

impl ScriptInterface {
    /// Reads the interface of the script at `script` (a path relative to `working_dir`, or
    /// absolute) by running the shim on it under Python. An error is one line saying what is
    /// wrong with the script.
    pub fn read(script: &Path, working_dir: &Path) -> Result<ScriptInterface, String> {
        let shim = CommandTool {
            argv: vec![
                PYTHON.into(),
                "-c".into(),
                SHIM.into(),
                script.display().to_string(),
            ],
            working_dir: working_dir.to_path_buf(),
            pack_dir: working_dir.to_path_buf(),
            env: vec![],
            timeout: Duration::from_secs(30),
            scratch: None,
            literal_args: vec![],
        };
        let answer = shim
            .call(&Map::new())
            .map_err(|e| format!("cannot run {PYTHON} to read its get_args(): {e}"))?;
        let stdout = match answer {
            CommandAnswer::Exited { stdout, stderr, .. } if !stdout.contains(MARKER) => {
                let said = stderr.lines().last().unwrap_or("").trim().to_string();
                return Err(format!("{PYTHON} could not read it: {said}"));
            }
            CommandAnswer::Exited { stdout, .. } => stdout,
            CommandAnswer::Killed { signal, .. } => {
                return Err(format!(
                    "reading its get_args() was killed by signal {signal}"
                ))
            }
            CommandAnswer::TimedOut => {
                return Err("reading its get_args() took longer than 30 s".into())
            }
        };
        let printed = stdout.rsplit(MARKER).next().unwrap_or_default();
        let answer: ShimAnswer = serde_json::from_str(printed.trim())
            .map_err(|e| format!("the interface printed for it is not readable: {e}"))?;
        match (answer.error, answer.interface) {
            (Some(error), _) => Err(error),
            (None, Some(interface)) => Ok(interface),
            (None, None) => Err("no interface was printed for it".into()),
        }
    }

    /// The tool's description: the parser's help, as `--help` prints it.
    pub fn description(&self) -> String {
        self.help.trim_end().to_string()
    }

    /// The JSON schema of the call's arguments, one property per argument by its `dest`.
    pub fn parameters(&self) -> Value {
        let properties: Map<String, Value> = self
            .arguments
            .iter()
            .map(|a| (a.dest.clone(), a.schema()))
            .collect();
        let required: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required)
            .map(|a| a.dest.as_str())
            .collect();
        json!({ "type": "object", "properties": properties, "required": required })
    }

    /// The command line a call's arguments make: options first, as `--flag=value` so that a
    /// value starting with `-` stays a value, then `--` and the positional values. An argument
    /// the call leaves out (or passes as `null`) is left off.
    pub fn command_line(&self, arguments: &Map<String, Value>) -> Vec<String> {
        let mut options = Vec::new();
        let mut positionals = Vec::new();
        for a in &self.arguments {
            let Some(value) = arguments.get(&a.dest).filter(|v| !v.is_null()) else {
                continue;
            };
            let values: Vec<String> = match value {
                Value::Array(items) => items.iter().map(word).collect(),
                one => vec![word(one)],
            };
            let Some(flag) = &a.flag else {
                positionals.extend(values);
                continue;
            };
            match a.kind.as_str() {
                "true" if value.as_bool() == Some(true) => options.push(flag.clone()),
                "false" if value.as_bool() == Some(false) => options.push(flag.clone()),
                "true" | "false" => {}
                "count" => {
                    let times = value.as_u64().unwrap_or(0).min(64);
                    options.extend((0..times).map(|_| flag.clone()));
                }
                "append" => options.extend(values.iter().map(|v| format!("{flag}={v}"))),
                _ if a.takes_list() => {
                    options.push(flag.clone());
                    options.extend(values);
                }
                _ => options.push(format!("{flag}={}", values.join(" "))),
            }
        }
        if !positionals.is_empty() {
            options.push("--".into());
            options.extend(positionals);
        }
        options
    }
}

/// One value as a word of the command line: a string as it is, anything else as JSON.
fn word(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    const CONVERT: &str = r#"
import argparse
print("imported")
def get_args():
    p = argparse.ArgumentParser(description="Converts an amount between currencies.")
    p.add_argument("amount", type=float, help="how much")
    p.add_argument("--from-currency", required=True, choices=["EUR", "USD"], help="from (default %(default)s)")
    p.add_argument("--to", default="USD", help="to")
    p.add_argument("--round", action="store_true", help="round it")
    p.add_argument("--tag", action="append", help="a tag")
    return p
if __name__ == "__main__":
    print(vars(get_args().parse_args()))
"#;

    /// Truth: an official tool, Python's argparse; the schema and the help are what the
    /// parser itself reports, and the command line built from a call parses back (by the
    /// script's own parser) to the call's values.
    #[test]
    fn a_parser_becomes_a_schema_and_a_call_its_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = script(dir.path(), "convert.py", CONVERT);
        let interface = ScriptInterface::read(&path, dir.path()).unwrap();
        assert!(
            interface.description().starts_with("usage: convert.py"),
            "{}",
            interface.description()
        );
        assert!(interface
            .description()
            .contains("Converts an amount between currencies."));
        let schema = interface.parameters();
        assert_eq!(schema["required"], json!(["amount", "from_currency"]));
        assert_eq!(schema["properties"]["amount"]["type"], "number");
        assert_eq!(
            schema["properties"]["from_currency"]["enum"],
            json!(["EUR", "USD"])
        );
        assert_eq!(
            schema["properties"]["from_currency"]["description"],
            "from (default None)"
        );
        assert_eq!(schema["properties"]["round"]["type"], "boolean");
        assert_eq!(schema["properties"]["tag"]["type"], "array");
        let call =
            json!({"amount": -12.5, "from_currency": "EUR", "round": true, "tag": ["a b", "-x"]});
        let line = interface.command_line(call.as_object().unwrap());
        assert_eq!(
            line,
            [
                "--from-currency=EUR",
                "--round",
                "--tag=a b",
                "--tag=-x",
                "--",
                "-12.5"
            ]
        );
        let mut run = std::process::Command::new(PYTHON);
        run.arg(&path).args(&line);
        let printed = String::from_utf8(run.output().unwrap().stdout).unwrap();
        assert!(
            printed.contains("'amount': -12.5")
                && printed.contains("'from_currency': 'EUR'")
                && printed.contains("'round': True")
                && printed.contains("'tag': ['a b', '-x']")
                && printed.contains("'to': 'USD'"),
            "{printed}"
        );
    }

    /// Truth: a change (each bad script is refused with one line saying why).
    #[test]
    fn a_script_without_a_parser_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("plain.py", "print('hi')\n", "has no get_args()"),
            (
                "broken.py",
                "import no_such_module_here\n",
                "ModuleNotFoundError",
            ),
            (
                "wrong.py",
                "def get_args():\n    return 3\n",
                "returned int, not an argparse.ArgumentParser",
            ),
            ("syntax.py", "def get_args(:\n", "SyntaxError"),
        ];
        for (name, text, expected) in cases {
            let path = script(dir.path(), name, text);
            let error = ScriptInterface::read(&path, dir.path()).unwrap_err();
            assert!(error.contains(expected), "{name}: {error}");
            assert!(!error.contains('\n'), "{name}: one line: {error}");
        }
    }
}
