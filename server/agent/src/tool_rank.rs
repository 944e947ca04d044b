//! Ranking MCP tools for a search query (BUD-4): BM25 over the words of each tool's full name
//! and description. Words are split on `_`, `-`, spaces, punctuation and case changes
//! (`listFiles`, `list_files` and `list-files` are all `list` + `file`), lowercased, with a
//! plural `s` dropped. Words of the name count twice, so a tool named after the query wins over
//! one that only mentions it.
//!
//! A query of comma-separated full names (`mcp__a__x, mcp__b__y`) selects exactly those tools,
//! in that order.

use std::collections::HashMap;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// How many times a word of the name counts.
const NAME_WEIGHT: usize = 2;

/// One searchable tool: its full name and description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDoc {
    pub full_name: String,
    pub description: String,
}

/// A BM25 index over a set of tools, built once per search.
pub struct ToolIndex<'a> {
    docs: &'a [SearchDoc],
    /// Per document: word → count.
    terms: Vec<HashMap<String, usize>>,
    lengths: Vec<usize>,
    average_length: f64,
    /// word → in how many documents it occurs.
    document_frequency: HashMap<String, usize>,
}

impl<'a> ToolIndex<'a> {
    pub fn new(docs: &'a [SearchDoc]) -> ToolIndex<'a> {
        let mut terms = Vec::with_capacity(docs.len());
        let mut lengths = Vec::with_capacity(docs.len());
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for doc in docs {
            let mut counts: HashMap<String, usize> = HashMap::new();
            let mut length = 0;
            for word in words(&doc.full_name) {
                *counts.entry(word).or_default() += NAME_WEIGHT;
                length += NAME_WEIGHT;
            }
            for word in words(&doc.description) {
                *counts.entry(word).or_default() += 1;
                length += 1;
            }
            for word in counts.keys() {
                *document_frequency.entry(word.clone()).or_default() += 1;
            }
            terms.push(counts);
            lengths.push(length);
        }
        let total: usize = lengths.iter().sum();
        let average_length = match docs.len() {
            0 => 1.0,
            n => (total as f64 / n as f64).max(1.0),
        };
        ToolIndex {
            docs,
            terms,
            lengths,
            average_length,
            document_frequency,
        }
    }

    /// The best matches for `query`, at most `limit`, best first (ties in catalog order).
    /// Documents that share no word with the query are never returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&'a SearchDoc> {
        if let Some(selected) = self.select_by_names(query) {
            return selected.into_iter().take(limit).collect();
        }
        let mut query_words = words(query);
        query_words.sort();
        query_words.dedup();
        let n = self.docs.len() as f64;
        let mut scored: Vec<(f64, usize)> = Vec::new();
        for (index, counts) in self.terms.iter().enumerate() {
            let mut score = 0.0;
            for word in &query_words {
                let Some(&tf) = counts.get(word) else {
                    continue;
                };
                let df = self.document_frequency.get(word).copied().unwrap_or(0) as f64;
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                let tf = tf as f64;
                let norm = K1 * (1.0 - B + B * self.lengths[index] as f64 / self.average_length);
                score += idf * tf * (K1 + 1.0) / (tf + norm);
            }
            if score > 0.0 {
                scored.push((score, index));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, index)| &self.docs[index])
            .collect()
    }

    /// A query whose comma-separated parts are all full names of indexed tools selects exactly
    /// those (BUD-4); `None` for any other query.
    fn select_by_names(&self, query: &str) -> Option<Vec<&'a SearchDoc>> {
        let parts: Vec<&str> = query
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return None;
        }
        let mut selected: Vec<&'a SearchDoc> = Vec::new();
        for part in parts {
            let doc = self.docs.iter().find(|d| d.full_name == part)?;
            if !selected.iter().any(|s| s.full_name == doc.full_name) {
                selected.push(doc);
            }
        }
        Some(selected)
    }
}

/// The words of a name or text: split on anything not alphanumeric and on case changes
/// (`readFile` → `read`, `file`; `HTTPServer` → `http`, `server`), lowercased, plural `s` dropped.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            push_word(&mut out, &mut current);
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let lower_to_upper = c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase());
        let acronym_end = c.is_uppercase()
            && previous.is_some_and(char::is_uppercase)
            && next.is_some_and(char::is_lowercase);
        let digit_change = previous.is_some_and(|p| p.is_ascii_digit() != c.is_ascii_digit());
        if lower_to_upper || acronym_end || digit_change {
            push_word(&mut out, &mut current);
        }
        current.extend(c.to_lowercase());
    }
    push_word(&mut out, &mut current);
    out
}

fn push_word(out: &mut Vec<String>, current: &mut String) {
    if current.is_empty() {
        return;
    }
    let mut word = std::mem::take(current);
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    if word == "mcp" {
        return; // every full name starts with it
    }
    out.push(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, description: &str) -> SearchDoc {
        SearchDoc {
            full_name: name.into(),
            description: description.into(),
        }
    }

    // BUD-4: words split on `_`, `-`, case changes and spaces.
    #[test]
    fn bud_4_words_split_on_underscores_dashes_case_and_spaces() {
        assert_eq!(words("mcp__fs__read_file"), ["fs", "read", "file"]);
        assert_eq!(
            words("listFiles list-files"),
            ["list", "file", "list", "file"]
        );
        assert_eq!(words("HTTPServer v2"), ["http", "server", "v", "2"]);
    }

    // BUD-4: the best match first; comma-separated full names select exactly those.
    #[test]
    fn bud_4_ranks_by_name_and_description_and_selects_full_names() {
        let docs = vec![
            doc(
                "mcp__fs__read_file",
                "Read the complete contents of a file.",
            ),
            doc("mcp__fs__write_file", "Create or overwrite a file."),
            doc("mcp__gh__create_issue", "Open a new issue in a repository."),
            doc("mcp__gh__list_issues", "List the issues of a repository."),
        ];
        let index = ToolIndex::new(&docs);
        let names = |query: &str, limit| -> Vec<&str> {
            index
                .search(query, limit)
                .iter()
                .map(|d| d.full_name.as_str())
                .collect()
        };
        assert_eq!(names("read a file", 1), ["mcp__fs__read_file"]);
        assert_eq!(names("open issue", 1), ["mcp__gh__create_issue"]);
        assert_eq!(names("listIssues", 1), ["mcp__gh__list_issues"]);
        assert!(names("weather forecast", 5).is_empty());
        assert_eq!(
            names("mcp__gh__list_issues, mcp__fs__write_file", 5),
            ["mcp__gh__list_issues", "mcp__fs__write_file"]
        );
        // A name that is not a tool makes it an ordinary query.
        assert_eq!(names("mcp__zz__nope, file", 5).len(), 2);
    }
}
