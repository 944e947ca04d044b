//! Ranking MCP tools for a search query (BUD-4): BM25 over the words of each tool's full name
//! and description. Words are split on `_`, `-`, spaces, punctuation and case changes
//! (`listFiles`, `list_files` and `list-files` are all `list` + `file`), lowercased, with a
//! plural `s` dropped. Words of the name count twice, so a tool named after the query wins over
//! one that only mentions it.
//!
//! A query of comma-separated full names (`mcp__a__x, mcp__b__y`) selects exactly those tools,
//! in that order.

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

/// A BM25 ranking over a set of tools. Building it costs nothing; each search makes one pass
/// over the tools' words, counting only the query's words (no per-tool word tables), so ranking
/// a thousand tools costs a few milliseconds, paid once per search (bench row 8c).
pub struct ToolIndex<'a> {
    docs: &'a [SearchDoc],
}

impl<'a> ToolIndex<'a> {
    pub fn new(docs: &'a [SearchDoc]) -> ToolIndex<'a> {
        ToolIndex { docs }
    }

    /// The best matches for `query`, at most `limit`, best first (ties in catalog order).
    /// Tools that share no word with the query are never returned. A query of full names
    /// selects exactly those, however many: `limit` bounds a ranking, not an explicit choice.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&'a SearchDoc> {
        if let Some(selected) = self.select_by_names(query) {
            return selected;
        }
        let mut query_words = words(query);
        query_words.sort();
        query_words.dedup();
        if query_words.is_empty() || self.docs.is_empty() {
            return Vec::new();
        }
        // One pass: per tool, its length and how often each query word occurs.
        let mut lengths = Vec::with_capacity(self.docs.len());
        let mut counts = vec![0usize; self.docs.len() * query_words.len()];
        for (index, doc) in self.docs.iter().enumerate() {
            let row = &mut counts[index * query_words.len()..(index + 1) * query_words.len()];
            let mut length = 0;
            let mut count = |word: &str, weight: usize| {
                length += weight;
                if let Ok(at) = query_words.binary_search_by(|q| q.as_str().cmp(word)) {
                    row[at] += weight;
                }
            };
            for_each_word(&doc.full_name, |w| count(w, NAME_WEIGHT));
            for_each_word(&doc.description, |w| count(w, 1));
            lengths.push(length);
        }
        let n = self.docs.len() as f64;
        let average_length = (lengths.iter().sum::<usize>() as f64 / n).max(1.0);
        let idf: Vec<f64> = (0..query_words.len())
            .map(|q| {
                let df = (0..self.docs.len())
                    .filter(|d| counts[d * query_words.len() + q] > 0)
                    .count() as f64;
                ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
            })
            .collect();
        let mut scored: Vec<(f64, usize)> = Vec::new();
        for (index, &length) in lengths.iter().enumerate() {
            let norm = K1 * (1.0 - B + B * length as f64 / average_length);
            let score: f64 = (0..query_words.len())
                .map(|q| {
                    let tf = counts[index * query_words.len() + q] as f64;
                    idf[q] * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum();
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
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

/// Calls `visit` with each word of `text` (see [`words`]), reusing one buffer.
fn for_each_word(text: &str, mut visit: impl FnMut(&str)) {
    let mut current = String::new();
    let mut previous: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            emit(&mut current, &mut visit);
            previous = Some(c);
            continue;
        }
        let next = chars.peek().copied();
        let lower_to_upper = c.is_uppercase() && previous.is_some_and(char::is_lowercase);
        let acronym_end = c.is_uppercase()
            && previous.is_some_and(char::is_uppercase)
            && next.is_some_and(char::is_lowercase);
        let digit_change = previous
            .is_some_and(|p| p.is_alphanumeric() && p.is_ascii_digit() != c.is_ascii_digit());
        if lower_to_upper || acronym_end || digit_change {
            emit(&mut current, &mut visit);
        }
        current.extend(c.to_lowercase());
        previous = Some(c);
    }
    emit(&mut current, &mut visit);
}

fn emit(current: &mut String, visit: &mut impl FnMut(&str)) {
    if current.is_empty() {
        return;
    }
    if current.len() > 3 && current.ends_with('s') && !current.ends_with("ss") {
        current.pop();
    }
    // Every full name starts with it.
    if current != "mcp" {
        visit(current);
    }
    current.clear();
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
        // Exactly the names given, more than `limit` of them too, each once.
        assert_eq!(
            names(
                "mcp__gh__list_issues,mcp__fs__write_file, mcp__gh__create_issue,mcp__gh__list_issues",
                1
            ),
            [
                "mcp__gh__list_issues",
                "mcp__fs__write_file",
                "mcp__gh__create_issue"
            ]
        );
        // A name that is not a tool makes it an ordinary query.
        assert_eq!(names("mcp__zz__nope, file", 5).len(), 2);
    }
}

/// BUD-7's measure over the recorded catalogs (`bench/fixtures/catalog`) and queries
/// (`bench/fixtures/tool_queries.json`): `WAVE_EVAL_HALF=tune|held|all`.
#[cfg(test)]
mod eval {
    use super::*;
    use serde_json::Value;

    fn fixtures() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/fixtures")
    }

    fn catalog() -> Vec<SearchDoc> {
        let mut paths: Vec<_> = std::fs::read_dir(fixtures().join("catalog"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        let mut docs = Vec::new();
        for path in paths {
            let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let server = file["server"].as_str().unwrap();
            for tool in file["tools"].as_array().unwrap() {
                docs.push(SearchDoc {
                    full_name: format!("mcp__{server}__{}", tool["name"].as_str().unwrap()),
                    description: tool["description"].as_str().unwrap_or("").to_string(),
                });
            }
        }
        docs
    }

    #[test]
    #[ignore = "prints BUD-7's hit rates: WAVE_EVAL_HALF=tune|held|all"]
    fn bud_7_eval() {
        let half = std::env::var("WAVE_EVAL_HALF").unwrap_or_else(|_| "tune".into());
        let docs = catalog();
        let index = ToolIndex::new(&docs);
        let queries: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures().join("tool_queries.json")).unwrap(),
        )
        .unwrap();
        let (mut n, mut hit, mut pn, mut phit, mut en, mut ehit) = (0, 0, 0, 0, 0, 0);
        for q in queries["queries"].as_array().unwrap() {
            if half != "all" && q["half"] != half.as_str() {
                continue;
            }
            let query = q["query"].as_str().unwrap();
            let found: Vec<&str> = index
                .search(query, 5)
                .iter()
                .map(|d| d.full_name.as_str())
                .collect();
            match q["tool"].as_str() {
                None => {
                    en += 1;
                    if found.is_empty() {
                        ehit += 1;
                    } else if std::env::var_os("WAVE_EVAL_MISSES").is_some() {
                        println!("NOISE {query:?}: {found:?}");
                    }
                }
                Some(tool) => {
                    let ok = found.contains(&tool);
                    n += 1;
                    hit += usize::from(ok);
                    if q["sharesNameWord"] == false {
                        pn += 1;
                        phit += usize::from(ok);
                    }
                    if !ok && std::env::var_os("WAVE_EVAL_MISSES").is_some() {
                        println!("MISS {query:?} wants {tool}: {found:?}");
                    }
                }
            }
        }
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        println!(
            "BUD-7 {half} ({} tools): top-5 {hit}/{n} = {:.1} %; no shared word {phit}/{pn} = {:.1} %; nothing-matches empty {ehit}/{en} = {:.1} %",
            docs.len(),
            pct(hit, n),
            pct(phit, pn),
            pct(ehit, en)
        );
    }
}
