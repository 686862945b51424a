//! Java and JavaScript replies read as bfcl-eval reads them (`java_parser.py`, `js_parser.py`):
//! tree-sitter with the same grammar versions, a reply with `ERROR` anywhere in its S-expression
//! rejected, and argument values kept as source text (strings for the type converters).
//!
//! BFCL's quirks are kept on purpose, since verdicts must match: the reply loses its first and
//! last characters before parsing, Java drops whitespace inside nested values and reads node
//! text by byte offsets from a character string, only the first call is read, and unnamed
//! arguments are filed under no name.

use tree_sitter::{Node, Parser};

use crate::harness::toolcall::python_list::bracketed;

use super::check_types::Language;

/// One decoded call; `None` is the name BFCL gives unnamed (positional) arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCall {
    pub name: String,
    pub arguments: Vec<(Option<String>, String)>,
}

/// What decoding gives: `Err` where BFCL's decoder raises (`ast_decoder:decoder_failed`),
/// `Ok(None)` where it returns no call list (`ast_decoder:decoder_wrong_output_format`).
pub type Decoded = Result<Option<Vec<SourceCall>>, String>;

/// Decodes a reply as `default_decode_ast_prompting` does for Java or JavaScript.
pub fn decode(language: Language, reply: &str) -> Decoded {
    let wrapped = bracketed(reply);
    // `input_str[1:-1]`: the brackets, or whatever else stands first and last.
    let chars: Vec<char> = wrapped.chars().collect();
    let source: String = chars[1..chars.len() - 1].iter().collect();
    match language {
        Language::Java => decode_java(&source),
        Language::JavaScript => decode_javascript(&source),
        Language::Python => Err("not a Java or JavaScript category".into()),
    }
}

fn parse(language: &tree_sitter::Language, source: &str) -> Result<tree_sitter::Tree, String> {
    let mut parser = Parser::new();
    parser
        .set_language(language)
        .map_err(|e| format!("grammar: {e}"))?;
    let tree = parser
        .parse(source, None)
        .ok_or("tree-sitter gave no tree")?;
    if tree.root_node().to_sexp().contains("ERROR") {
        return Err("Error parsing the source code.".into());
    }
    Ok(tree)
}

/// BFCL gathers a repeated name into a list and then refuses it.
fn no_duplicates(arguments: &[(Option<String>, String)]) -> Result<(), String> {
    for (i, (key, _)) in arguments.iter().enumerate() {
        if arguments[..i].iter().any(|(k, _)| k == key) {
            return Err("Multiple arguments with the same name are not supported.".into());
        }
    }
    Ok(())
}

struct JavaSource {
    chars: Vec<char>,
}

impl JavaSource {
    /// `source_code[node.start_byte:node.end_byte]`: byte offsets used as character indices,
    /// as BFCL does; they differ only after non-ASCII text.
    fn text(&self, node: Node) -> String {
        let len = self.chars.len();
        let (start, end) = (node.start_byte().min(len), node.end_byte().min(len));
        if start >= end {
            return String::new();
        }
        self.chars[start..end].iter().collect()
    }

    fn traverse_node(&self, node: Option<Node>, nested: bool) -> Result<String, String> {
        // BFCL would raise on a missing child (`None.type`); that is a decode failure.
        let node = node.ok_or("a value lacks a part the Java decoder expects")?;
        let kind = node.kind();
        if kind == "string_literal" || kind == "character_literal" {
            let text = self.text(node);
            return Ok(if nested { text } else { strip_ends(&text) });
        }
        match kind {
            "identifier" | "class_literal" | "type_identifier" | "method_invocation" => {
                Ok(self.text(node))
            }
            "array_creation_expression" => {
                let type_text = self.traverse_node(node.child_by_field_name("type"), true)?;
                let value_text = self.traverse_node(node.child_by_field_name("value"), true)?;
                Ok(format!("new {type_text}[]{value_text}"))
            }
            "object_creation_expression" => {
                let type_text = self.traverse_node(node.child_by_field_name("type"), true)?;
                match node.child_by_field_name("arguments") {
                    Some(arguments) => {
                        let mut texts = Vec::new();
                        let mut cursor = arguments.walk();
                        for child in arguments.children(&mut cursor) {
                            if !matches!(child.kind(), "," | "(" | ")") {
                                texts.push(self.traverse_node(Some(child), true)?);
                            }
                        }
                        Ok(format!("new {type_text}({})", texts.join(", ")))
                    }
                    None => Ok(format!("new {type_text}()")),
                }
            }
            "set" => {
                let mut items = Vec::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if !matches!(child.kind(), "," | "set") {
                        items.push(self.traverse_node(Some(child), true)?);
                    }
                }
                Ok(format!("{{{}}}", items.join(", ")))
            }
            _ if node.child_count() > 0 => {
                let mut out = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    out.push_str(&self.traverse_node(Some(child), true)?);
                }
                Ok(out)
            }
            _ => Ok(self.text(node)),
        }
    }

    fn extract_arguments(&self, node: Node) -> Result<Vec<(Option<String>, String)>, String> {
        let mut arguments = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "assignment_expression" => {
                    let name_node = child.child(0).ok_or("assignment without a name")?;
                    let name = self.text(name_node);
                    let value = self.traverse_node(child.child(2), false)?;
                    arguments.push((Some(name), value));
                }
                "identifier" | "class_literal" | "set" => {
                    let value = self.traverse_node(Some(child), false)?;
                    arguments.push((None, value));
                }
                _ => {}
            }
        }
        Ok(arguments)
    }

    /// The first method invocation with arguments, depth first.
    fn traverse(&self, node: Node) -> Result<Option<SourceCall>, String> {
        if node.kind() == "method_invocation" {
            let method = self.text(
                node.child_by_field_name("name")
                    .ok_or("method invocation without a name")?,
            );
            let name = match node.child_by_field_name("object") {
                Some(object) => format!("{}.{method}", self.text(object)),
                None => method,
            };
            return match node.child_by_field_name("arguments") {
                Some(arguments) => {
                    let arguments = self.extract_arguments(arguments)?;
                    no_duplicates(&arguments)?;
                    Ok(Some(SourceCall { name, arguments }))
                }
                None => Ok(None),
            };
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if let Some(call) = self.traverse(child)? {
                return Ok(Some(call));
            }
        }
        Ok(None)
    }
}

/// `text[1:-1]` in Python.
fn strip_ends(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 2 {
        return String::new();
    }
    chars[1..chars.len() - 1].iter().collect()
}

fn decode_java(source: &str) -> Decoded {
    let tree = parse(&tree_sitter_java::language(), source)?;
    let java = JavaSource {
        chars: source.chars().collect(),
    };
    Ok(java.traverse(tree.root_node())?.map(|call| vec![call]))
}

fn decode_javascript(source: &str) -> Decoded {
    let tree = parse(&tree_sitter_javascript::language(), source)?;
    let bytes = source.as_bytes();
    let text = |node: Node| -> Result<String, String> {
        node.utf8_text(bytes)
            .map(str::to_string)
            .map_err(|e| e.to_string())
    };
    let root = tree.root_node();
    if root.kind() != "program" {
        return Ok(None);
    }
    let mut cursor = root.walk();
    for statement in root.children(&mut cursor) {
        if statement.kind() != "expression_statement" {
            continue;
        }
        let mut inner = statement.walk();
        for expression in statement.children(&mut inner) {
            if expression.kind() != "call_expression" {
                continue;
            }
            let name = text(expression.child(0).ok_or("call without a callee")?)?;
            let arguments_node = expression.child(1).ok_or("call without arguments")?;
            let mut arguments = Vec::new();
            let mut walk = arguments_node.walk();
            for child in arguments_node.children(&mut walk) {
                match child.kind() {
                    "assignment_expression" => {
                        let name = text(child.child(0).ok_or("assignment without a name")?)?;
                        let mut value = text(child.child(2).ok_or("assignment without a value")?)?;
                        let quoted = (value.starts_with('"') && value.ends_with('"'))
                            || (value.starts_with('\'') && value.ends_with('\''));
                        if quoted {
                            value = strip_ends(&value);
                        }
                        arguments.push((Some(name), value));
                    }
                    "identifier" | "true" => arguments.push((None, text(child)?)),
                    _ => {}
                }
            }
            no_duplicates(&arguments)?;
            return Ok(Some(vec![SourceCall { name, arguments }]));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(reply: &str) -> Decoded {
        decode(Language::Java, reply)
    }

    fn js(reply: &str) -> Decoded {
        decode(Language::JavaScript, reply)
    }

    fn args(pairs: &[(Option<&str>, &str)]) -> Vec<(Option<String>, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.map(str::to_string), v.to_string()))
            .collect()
    }

    #[test]
    fn java_values_keep_their_source_text() {
        let calls = java(r#"[Foo.bar(a="x y", b=new String[] {"p", "q"}, c=10L, d)]"#)
            .unwrap()
            .unwrap();
        assert_eq!(calls[0].name, "Foo.bar");
        assert_eq!(
            calls[0].arguments,
            args(&[
                (Some("a"), "x y"),
                (Some("b"), r#"new String[]{"p","q"}"#),
                (Some("c"), "10L"),
                (None, "d"),
            ])
        );
    }

    #[test]
    fn java_errors_and_non_calls() {
        assert!(java("[Foo.bar(a=)]").is_err());
        assert_eq!(java("[]"), Ok(None));
        assert!(java("[f(a=1, a=2)]").is_err());
    }

    #[test]
    fn javascript_strips_quotes_of_top_level_strings_only() {
        let calls = js(r#"[go(a='x', b=[1, "y"], c=true, true)]"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            calls[0].arguments,
            args(&[
                (Some("a"), "x"),
                (Some("b"), r#"[1, "y"]"#),
                (Some("c"), "true"),
                (None, "true"),
            ])
        );
        assert_eq!(js("x = 1"), Ok(None));
    }
}
