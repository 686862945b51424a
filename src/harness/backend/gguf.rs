//! Reads a GGUF file's metadata keys without llama.cpp, so that a file can be checked and its
//! model family known before the weights load.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::{anyhow, bail};

/// String-valued metadata (other values are skipped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GgufMetadata {
    pub version: u32,
    pub tensor_count: u64,
    pub strings: BTreeMap<String, String>,
    /// The longest entry of the vocabulary (`tokenizer.ggml.tokens`) in bytes as stored, which
    /// is at least the bytes of text one token stands for: a text of n bytes needs at least
    /// n / this many tokens.
    pub longest_token_bytes: Option<usize>,
    /// The text of the beginning- and end-of-sequence tokens, as a chat template is given them.
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
}

impl GgufMetadata {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.strings.get(key).map(String::as_str)
    }
}

struct Reader<R: Read> {
    inner: R,
}

impl<R: Read> Reader<R> {
    fn bytes<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut buf = [0u8; N];
        self.inner.read_exact(&mut buf)?;
        Ok(buf)
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let copied = std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())?;
        if copied < n {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }
    fn string(&mut self) -> std::io::Result<String> {
        let len = self.u64()?;
        if len > 1 << 26 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "string too long",
            ));
        }
        let mut buf = vec![0u8; len as usize];
        self.inner.read_exact(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
    /// Skips a value of GGUF type `kind`, or returns it when it is a string.
    fn value(&mut self, kind: u32) -> std::io::Result<Option<String>> {
        self.nested_value(kind, 0)
    }

    /// Arrays of arrays are read to a small depth: a file that nests them deeper is corrupt or
    /// hostile, and reading it by recursion would overflow the stack.
    fn nested_value(&mut self, kind: u32, depth: usize) -> std::io::Result<Option<String>> {
        const DEEPEST: usize = 8;
        let fixed = |k: u32| match k {
            0 | 1 | 7 => Some(1u64),
            2 | 3 => Some(2),
            4..=6 => Some(4),
            10..=12 => Some(8),
            _ => None,
        };
        match kind {
            8 => self.string().map(Some),
            9 => {
                let item = self.u32()?;
                let count = self.u64()?;
                match fixed(item) {
                    Some(size) => self.skip(size.saturating_mul(count))?,
                    None if item == 9 && depth >= DEEPEST => {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("arrays nested more than {DEEPEST} deep"),
                        ));
                    }
                    None => {
                        for _ in 0..count {
                            self.nested_value(item, depth + 1)?;
                        }
                    }
                }
                Ok(None)
            }
            k => match fixed(k) {
                Some(size) => self.skip(size).map(|_| None),
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("unknown value type {k}"),
                )),
            },
        }
    }
}

pub fn read_metadata(path: &Path) -> anyhow::Result<GgufMetadata> {
    let shown = path.display();
    if path.is_dir() {
        bail!("{shown}: is a folder, not a model file; give the .gguf file inside it");
    }
    // A FIFO or a device is refused at once (`base::input`), not read until it blocks.
    let file = crate::base::input::open_input(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow!("{shown}: model file not found"),
        _ => anyhow!("{shown}: cannot open model file: {e}"),
    })?;
    let mut r = Reader {
        inner: BufReader::new(file),
    };
    let magic: [u8; 4] = r.bytes().unwrap_or_default();
    if &magic != b"GGUF" {
        bail!("{shown}: not a GGUF file (it does not start with the GGUF magic bytes)");
    }
    let parse = |r: &mut Reader<BufReader<File>>| -> std::io::Result<GgufMetadata> {
        let version = r.u32()?;
        let tensor_count = r.u64()?;
        let kv_count = r.u64()?;
        let mut meta = GgufMetadata {
            version,
            tensor_count,
            ..Default::default()
        };
        let mut tokens: Vec<String> = Vec::new();
        let (mut bos_id, mut eos_id) = (None, None);
        for _ in 0..kv_count {
            let key = r.string()?;
            let kind = r.u32()?;
            if key == "tokenizer.ggml.tokens" && kind == 9 {
                let item = r.u32()?;
                let count = r.u64()?;
                let mut longest = 0;
                for _ in 0..count {
                    if item == 8 {
                        let token = r.string()?;
                        longest = longest.max(token.len());
                        tokens.push(token);
                    } else {
                        r.value(item)?;
                    }
                }
                meta.longest_token_bytes = (item == 8).then_some(longest);
                continue;
            }
            // Token ids are 32-bit unsigned numbers (GGUF type 4).
            if kind == 4
                && (key == "tokenizer.ggml.bos_token_id" || key == "tokenizer.ggml.eos_token_id")
            {
                let id = r.u32()? as usize;
                match key.as_str() {
                    "tokenizer.ggml.bos_token_id" => bos_id = Some(id),
                    _ => eos_id = Some(id),
                }
                continue;
            }
            if let Some(value) = r.value(kind)? {
                meta.strings.insert(key, value);
            }
        }
        meta.bos_token = bos_id.and_then(|id| tokens.get(id).cloned());
        meta.eos_token = eos_id.and_then(|id| tokens.get(id).cloned());
        Ok(meta)
    };
    parse(&mut r).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            anyhow!("{shown}: truncated GGUF file (it ends inside its metadata)")
        }
        _ => anyhow!("{shown}: corrupt GGUF metadata: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: the GGUF layout (magic, version, counts, then key, type, value). A key whose
    /// value nests arrays 200,000 deep is refused in one line, not by a stack overflow.
    #[test]
    fn arrays_nested_without_end_are_refused_not_recursed_into() {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.push(b'x');
        bytes.extend(9u32.to_le_bytes());
        for _ in 0..200_000 {
            bytes.extend(9u32.to_le_bytes());
            bytes.extend(1u64.to_le_bytes());
        }
        bytes.extend(4u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep.gguf");
        std::fs::write(&path, bytes).unwrap();
        let error = read_metadata(&path).unwrap_err().to_string();
        assert!(
            error.contains("corrupt GGUF metadata") && error.contains("nested"),
            "{error}"
        );
    }
}
