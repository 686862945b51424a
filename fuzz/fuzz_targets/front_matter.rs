//! `SKILL.md` front matter and variants: any text is read or refused with a message.
#![no_main]

use std::path::Path;

use skilleval::harness::skills;

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = skills::parse_skill_md(text, Path::new("fuzz/SKILL.md"));
    let _ = skills::has_front_matter(text);
});
