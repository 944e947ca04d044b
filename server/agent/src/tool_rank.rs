//! Ranking MCP tools for a search query (BUD-4, BUD-7): BM25F over the words of each tool's
//! name, title, description, input schema (property names and descriptions) and annotations,
//! with field boosts. Words are split on `_`, `-`, spaces, punctuation and case changes
//! (`listFiles`, `list_files` and `list-files` are all `list` + `file`), lowercased, common
//! English words dropped, and stemmed (Snowball English: `entities` → `entiti`, like `entity`).
//!
//! A query's words also find the words the field uses for the same thing (a ticket is an issue,
//! an MR a merge request, a folder a directory: `tool_rank/synonyms.txt`, reviewed data with
//! its sources), at a lower weight than the word itself. A tool whose whole name the query
//! covers gets a bonus, so `create_merge_request` ranks above `create_merge_request_note` for
//! "create a merge request". A tool must match enough of the query (a share of the query's
//! weight, rare words weighing more) to be returned at all, so a query that matches nothing
//! returns nothing rather than noise.
//!
//! With the embedding model installed ([`embedding`]), a tool's score also counts how near the
//! query's meaning is to the tool's (the cosine of their sentence vectors), so "grab the html of
//! a website" finds a fetch tool whose words it does not share; the floor then asks for a tool
//! near enough in meaning too, or very near in meaning alone.
//!
//! A query of comma-separated full names (`mcp__a__x, mcp__b__y`) selects exactly those tools,
//! in that order.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use serde_json::{Map, Value};

pub mod embedding;

use embedding::{Embedder, Vector};

/// The field's vocabulary: one group of equivalent words or phrases a line.
const SYNONYMS: &str = include_str!("tool_rank/synonyms.txt");

/// Products and services MCP servers are made for: one name a line (and its source count).
const SERVICES: &str = include_str!("tool_rank/services.txt");

/// The kinds of action a request asks for and the verbs that say them.
const ACTIONS: &str = include_str!("tool_rank/actions.txt");

/// Words before a request's verb: "please", "can you", "I want to", "let's".
const LEAD_FILLERS: &[&str] = &[
    "please", "can", "could", "would", "you", "i", "we", "want", "to", "need", "let", "lets", "s",
    "go", "ahead", "and", "just", "quickly", "kindly",
];

/// Words that say nothing about a tool.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "each",
    "every",
    "for",
    "from",
    "had",
    "has",
    "have",
    "he",
    "her",
    "here",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "let",
    "like",
    "may",
    "me",
    "might",
    "must",
    "my",
    "need",
    "of",
    "on",
    "onto",
    "or",
    "our",
    "please",
    "s",
    "she",
    "should",
    "so",
    "some",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "us",
    "use",
    "using",
    "very",
    "via",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "mcp",
    "everything",
    "something",
    "anything",
    "nothing",
    "else",
    "other",
    "another",
    "again",
    "still",
    "thing",
    "stuff",
];

/// The knobs of the ranking; [`RankOptions::default`] is what the agent uses. The others exist
/// to measure what each part does (bench row 8, BUD-7's eval).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankOptions {
    /// Field boosts: how much one occurrence in each field counts (`server`: the words of the
    /// server's name, which every tool of that server has).
    pub name: f64,
    pub server: f64,
    pub title: f64,
    pub description: f64,
    pub params: f64,
    pub annotations: f64,
    /// Weight of a synonym's match against the word's own (0: no vocabulary).
    pub synonyms: f64,
    /// A tool whose whole name the query covers scores this much more (0.5: +50 %); one whose
    /// name it covers in part, `name_bonus × share^name_power` more.
    pub name_bonus: f64,
    pub name_power: f64,
    /// BM25: term-frequency saturation and length normalisation.
    pub k1: f64,
    pub b: f64,
    /// The share of the query's weight a tool must match to be returned (0: any word).
    pub floor: f64,
    /// How much a word no tool has weighs in the floor, against the rarest word (1: as much).
    pub unknown: f64,
    /// With the embedding model: how much the meaning's cosine adds to the word score (scaled so
    /// the best word score is 1); 0: words only.
    pub meaning: f64,
    /// With the embedding model, the floor is: a tool matches `meaning_floor` of the query's
    /// weight and one is at least `meaning_min` near in meaning, or one is `meaning_alone` near.
    pub meaning_floor: f64,
    pub meaning_min: f64,
    pub meaning_alone: f64,
    /// A query naming a service of `services.txt` that no tool mentions finds nothing.
    pub services: bool,
    /// A query starting with a verb of `actions.txt` finds nothing when no tool found does (or
    /// may do) that kind of action.
    pub actions: bool,
    /// Snowball stemming (else only a plural `s` is dropped).
    pub stem: bool,
    /// Drop common English words.
    pub stopwords: bool,
}

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            name: 3.0,
            server: 1.0,
            title: 2.0,
            description: 1.0,
            params: 0.3,
            annotations: 0.3,
            synonyms: 0.8,
            name_bonus: 0.5,
            name_power: 2.0,
            k1: 1.2,
            b: 0.9,
            floor: 0.4,
            unknown: 0.6,
            meaning: 2.5,
            meaning_floor: 0.5,
            meaning_min: 0.2,
            meaning_alone: 0.3,
            services: true,
            actions: true,
            stem: true,
            stopwords: true,
        }
    }
}

/// One searchable tool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchDoc {
    pub full_name: String,
    pub description: String,
    pub title: String,
    /// The input schema's property names and descriptions, nested ones too, one a line.
    pub params: String,
    /// The annotations' title and the hints that are set (`read only`, `destructive`, ...).
    pub annotations: String,
}

impl SearchDoc {
    /// A tool as the server defines it (`annotations` as their JSON).
    pub fn new(
        full_name: &str,
        title: Option<&str>,
        description: Option<&str>,
        input_schema: &Map<String, Value>,
        annotations: Option<&Value>,
    ) -> SearchDoc {
        let mut params = String::new();
        schema_words(input_schema, &mut params, 0);
        let mut notes = String::new();
        if let Some(Value::Object(a)) = annotations {
            if let Some(Value::String(t)) = a.get("title") {
                notes.push_str(t);
                notes.push('\n');
            }
            for (hint, words) in [
                ("readOnlyHint", "read only"),
                ("destructiveHint", "destructive"),
                ("idempotentHint", "idempotent"),
                ("openWorldHint", "open world"),
            ] {
                if a.get(hint) == Some(&Value::Bool(true)) {
                    notes.push_str(words);
                    notes.push('\n');
                }
            }
        }
        SearchDoc {
            full_name: full_name.to_string(),
            description: description.unwrap_or("").to_string(),
            title: title.unwrap_or("").to_string(),
            params,
            annotations: notes,
        }
    }
}

impl SearchDoc {
    /// What the embedding model reads of a tool: server and tool name as words, title and
    /// description (cut at [`embedding::TOOL_TOKENS`] word pieces).
    pub fn meaning_text(&self) -> String {
        let (server, tool) = split_full_name(&self.full_name);
        let spaced = |name: &str| {
            let mut words = Vec::new();
            for_each_word(name, |w| words.push(w.to_string()));
            words.join(" ")
        };
        format!(
            "{} {}: {} {}",
            spaced(server),
            spaced(tool),
            self.title,
            self.description
        )
    }
}

/// Property names and descriptions of a schema, three levels deep.
fn schema_words(schema: &Map<String, Value>, out: &mut String, depth: usize) {
    if depth > 3 {
        return;
    }
    if let Some(Value::Object(items)) = schema.get("items") {
        schema_words(items, out, depth + 1);
    }
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        out.push_str(name);
        out.push('\n');
        if let Value::Object(property) = property {
            if let Some(Value::String(d)) = property.get("description") {
                out.push_str(d);
                out.push('\n');
            }
            schema_words(property, out, depth + 1);
        }
    }
}

/// Splits, lowercases, drops stopwords and stems, remembering stems.
struct Tokenizer {
    stemmer: Option<Stemmer>,
    stopwords: bool,
    cache: HashMap<String, Option<String>>,
}

impl Tokenizer {
    fn new(options: &RankOptions) -> Tokenizer {
        Tokenizer {
            stemmer: options.stem.then(|| Stemmer::create(Algorithm::English)),
            stopwords: options.stopwords,
            cache: HashMap::new(),
        }
    }

    /// The term of one lowercase word; `None` for a stopword (when they are dropped).
    fn term(&mut self, word: &str) -> Option<String> {
        if let Some(term) = self.cache.get(word) {
            return term.clone();
        }
        let term = match (self.stopwords && STOPWORDS.contains(&word), &self.stemmer) {
            (true, _) => None,
            (false, Some(stemmer)) => Some(stem(stemmer, word)),
            (false, None) => Some(plural(word)),
        };
        self.cache.insert(word.to_string(), term.clone());
        term
    }

    /// Adds `weight` to `tf` for each term of `text` (stopwords dropped); the total added.
    /// Allocates only for a term new to `tf` or a word new to the tokenizer.
    fn count(&mut self, text: &str, weight: f64, tf: &mut HashMap<String, f64>) -> f64 {
        let mut total = 0.0;
        for_each_word(text, |w| {
            if !self.cache.contains_key(w) {
                self.term(w);
            }
            if let Some(Some(term)) = self.cache.get(w) {
                total += weight;
                match tf.get_mut(term.as_str()) {
                    Some(count) => *count += weight,
                    None => {
                        tf.insert(term.clone(), weight);
                    }
                }
            }
        });
        total
    }

    /// The terms of `text`, stopwords dropped.
    fn terms(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |w| {
            if let Some(t) = self.term(w) {
                out.push(t);
            }
        });
        out
    }

    /// Every word of `text` as a term, stopwords kept (`None` marks them): phrase matching.
    fn sequence(&mut self, text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for_each_word(text, |w| {
            let stop = self.stopwords && STOPWORDS.contains(&w);
            let term = match &self.stemmer {
                Some(stemmer) => stem(stemmer, w),
                None => plural(w),
            };
            out.push((term, stop));
        });
        out
    }
}

/// Snowball's stem; the plural of a short acronym (`PRs`, `MRs`, `DSNs`, which Snowball keeps
/// as they are) loses its `s` too.
fn stem(stemmer: &Stemmer, word: &str) -> String {
    let stemmed = stemmer.stem(word);
    match stemmed == word && word.len() >= 3 && word.ends_with('s') && !word.ends_with("ss") {
        true => word[..word.len() - 1].to_string(),
        false => stemmed.into_owned(),
    }
}

fn plural(word: &str) -> String {
    match word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        true => word[..word.len() - 1].to_string(),
        false => word.to_string(),
    }
}

/// A tool's terms with their boosted frequencies.
struct DocTerms {
    tf: HashMap<String, f64>,
    length: f64,
    /// The terms of the tool's own name but those every tool of its server has (`jira_`,
    /// `browser_`, `API-`) and the server's name: what "the query covers the name" means.
    name: Vec<String>,
}

/// The groups of the vocabulary, parsed once: each entry as its words.
fn synonym_groups() -> &'static Vec<Vec<String>> {
    static GROUPS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        SYNONYMS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                l.split(',')
                    .map(|e| e.trim().to_lowercase())
                    .filter(|e| !e.is_empty())
                    .collect()
            })
            .collect()
    })
}

/// The names of [`SERVICES`].
fn service_names() -> impl Iterator<Item = &'static str> {
    SERVICES
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
}

/// A text's words as names are written: split on what is not a letter or digit only
/// (`PagerDuty` stays one word), lowercased.
fn name_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The verbs of [`ACTIONS`], parsed once: each verb's kinds of action (a bit each), and the
/// verbs that start no check in a query.
struct ActionVerbs {
    kinds: HashMap<String, u8>,
    ambiguous: HashSet<String>,
}

fn action_verbs() -> &'static ActionVerbs {
    static VERBS: OnceLock<ActionVerbs> = OnceLock::new();
    VERBS.get_or_init(|| {
        let mut verbs = ActionVerbs {
            kinds: HashMap::new(),
            ambiguous: HashSet::new(),
        };
        let lines = ACTIONS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'));
        let mut bit = 1u8;
        for line in lines {
            let Some((kind, list)) = line.split_once(':') else {
                continue;
            };
            let words = list.split(',').map(|w| w.trim().to_lowercase());
            if kind.trim() == "ambiguous" {
                verbs.ambiguous.extend(words);
                continue;
            }
            for word in words {
                *verbs.kinds.entry(word).or_default() |= bit;
            }
            bit <<= 1;
        }
        verbs
    })
}

/// The kinds of action a query asks for: those of its first word after the fillers ("please
/// archive ..." → delete); none when that word is no verb of [`ACTIONS`] or an ambiguous one.
fn asked_actions(query: &str) -> u8 {
    let mut first = None;
    for_each_word(query, |word| {
        if first.is_none() && !LEAD_FILLERS.contains(&word) {
            first = Some(word.to_string());
        }
    });
    let verbs = action_verbs();
    match first {
        Some(word) if !verbs.ambiguous.contains(&word) => {
            verbs.kinds.get(&word).copied().unwrap_or(0)
        }
        _ => 0,
    }
}

/// The kinds of action a tool's own name and title say (none: it may do anything).
fn tool_actions(doc: &SearchDoc) -> u8 {
    let kinds = &action_verbs().kinds;
    let mut found = 0;
    let (_, tool) = split_full_name(&doc.full_name);
    for text in [tool, doc.title.as_str()] {
        for_each_word(text, |word| found |= kinds.get(word).copied().unwrap_or(0));
    }
    found
}

/// A lowercased name as written, in the plural and in the singular (`sheet`, `sheets`).
fn name_forms(name: &str) -> impl Iterator<Item = String> + '_ {
    [
        Some(name.to_string()),
        Some(format!("{name}s")),
        name.strip_suffix('s').map(str::to_string),
    ]
    .into_iter()
    .flatten()
}

/// One idea of the query: a word of it, or a phrase of stopwords (`who am i`), and the terms of
/// its synonyms (each a list of terms, all of which count).
struct Concept {
    term: Option<String>,
    synonyms: Vec<Vec<String>>,
}

/// A ranking over a set of tools: built once per set (each tool's words counted; the agent
/// keeps it while the set stays the same), then each search scores only the query's words
/// (bench row 8c).
pub struct ToolIndex {
    docs: Vec<SearchDoc>,
    terms: Vec<DocTerms>,
    df: HashMap<String, usize>,
    average_length: f64,
    options: RankOptions,
    /// The embedding model and each tool's vector, when the model is installed and
    /// `options.meaning` is on.
    meaning: Option<(&'static Embedder, Vec<Vector>)>,
    /// The terms of the services no tool of the set mentions.
    absent_services: HashSet<String>,
    /// Each tool's kinds of action ([`tool_actions`]), by its index.
    actions: Vec<u8>,
    /// The vocabulary's groups as the tokenizer reads them (each entry's words, a stopword
    /// marked), one to one with [`synonym_groups`]; empty without synonyms.
    vocabulary: Vec<Vec<Vec<(String, bool)>>>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.docs.len())
            .field("terms", &self.df.len())
            .finish()
    }
}

impl ToolIndex {
    pub fn new(docs: &[SearchDoc]) -> ToolIndex {
        ToolIndex::with_options(docs, RankOptions::default())
    }

    pub fn with_options(docs: &[SearchDoc], options: RankOptions) -> ToolIndex {
        let mut tokenizer = Tokenizer::new(&options);
        // Per server: how many tools, and in how many tool names each term occurs.
        let mut per_server: HashMap<&str, (usize, HashMap<String, usize>)> = HashMap::new();
        let mut names = Vec::with_capacity(docs.len());
        for doc in docs {
            let (server, tool) = split_full_name(&doc.full_name);
            let mut name: Vec<String> = tokenizer.terms(tool);
            name.dedup();
            let entry = per_server.entry(server).or_default();
            entry.0 += 1;
            for term in name.iter().collect::<HashSet<_>>() {
                *entry.1.entry(term.clone()).or_default() += 1;
            }
            names.push(name);
        }
        let mut terms = Vec::with_capacity(docs.len());
        let mut df: HashMap<String, usize> = HashMap::new();
        for (doc, name) in docs.iter().zip(names) {
            let (server, tool) = split_full_name(&doc.full_name);
            let server_terms = tokenizer.terms(server);
            let (count, in_names) = &per_server[server];
            let namespace =
                |t: &String| server_terms.contains(t) || (*count >= 4 && in_names[t] * 2 > *count);
            let own: Vec<String> = name.iter().filter(|t| !namespace(t)).cloned().collect();
            let mut tf: HashMap<String, f64> = HashMap::new();
            let length = tokenizer.count(tool, options.name, &mut tf)
                + tokenizer.count(server, options.server, &mut tf)
                + tokenizer.count(&doc.title, options.title, &mut tf)
                + tokenizer.count(&doc.description, options.description, &mut tf)
                + tokenizer.count(&doc.params, options.params, &mut tf)
                + tokenizer.count(&doc.annotations, options.annotations, &mut tf);
            for term in tf.keys() {
                match df.get_mut(term.as_str()) {
                    Some(count) => *count += 1,
                    None => {
                        df.insert(term.clone(), 1);
                    }
                }
            }
            terms.push(DocTerms {
                tf,
                length,
                name: own,
            });
        }
        let average_length =
            (terms.iter().map(|t| t.length).sum::<f64>() / docs.len().max(1) as f64).max(1.0);
        let meaning = match Embedder::shared() {
            Some(embedder) if options.meaning > 0.0 && !docs.is_empty() => {
                let texts: Vec<String> = docs.iter().map(SearchDoc::meaning_text).collect();
                match embedder.tools(&texts) {
                    Ok(vectors) => Some((embedder, vectors)),
                    Err(e) => {
                        tracing::warn!("tool search ranks by words only: {e}");
                        None
                    }
                }
            }
            _ => None,
        };
        let absent_services = match options.services {
            true => {
                // Names are matched as whole words, not stems ("linearly" is not Linear).
                let mut present = HashSet::new();
                for doc in docs {
                    for text in [
                        doc.full_name.as_str(),
                        &doc.title,
                        &doc.description,
                        &doc.params,
                        &doc.annotations,
                    ] {
                        present.extend(name_words(text));
                    }
                }
                service_names()
                    .filter(|name| !name_forms(name).any(|form| present.contains(&form)))
                    .map(str::to_string)
                    .collect()
            }
            false => HashSet::new(),
        };
        let vocabulary = match options.synonyms > 0.0 {
            true => synonym_groups()
                .iter()
                .map(|group| group.iter().map(|e| tokenizer.sequence(e)).collect())
                .collect(),
            false => Vec::new(),
        };
        ToolIndex {
            docs: docs.to_vec(),
            terms,
            df,
            average_length,
            options,
            meaning,
            absent_services,
            actions: docs.iter().map(tool_actions).collect(),
            vocabulary,
        }
    }

    /// Embeds `docs` in the background, so a later [`ToolIndex::new`] over them finds their
    /// vectors ready (a no-op without the model).
    pub fn prepare(docs: &[SearchDoc]) {
        if docs.is_empty() || embedding::model_dir().is_none_or(|d| !d.exists()) {
            return;
        }
        let texts: Vec<String> = docs.iter().map(SearchDoc::meaning_text).collect();
        let spawned = std::thread::Builder::new()
            .name("tool-embeddings".into())
            .spawn(move || {
                if let Some(embedder) = Embedder::shared()
                    && let Err(e) = embedder.tools(&texts)
                {
                    tracing::warn!("tool search: {e}");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("tool search: cannot embed tools in the background: {e}");
        }
    }

    /// Whether the ranking uses the embedding model.
    pub fn by_meaning(&self) -> bool {
        self.meaning.is_some()
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.docs.len() as f64;
        let df = self.df.get(term).copied().unwrap_or(0) as f64;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// The query's concepts: its words, each with the terms of its synonyms.
    fn concepts(&self, query: &str) -> Vec<Concept> {
        let mut tokenizer = Tokenizer::new(&self.options);
        let sequence = tokenizer.sequence(query);
        let mut concepts: Vec<Concept> = Vec::new();
        for (term, stop) in &sequence {
            if !stop && !concepts.iter().any(|c| c.term.as_ref() == Some(term)) {
                concepts.push(Concept {
                    term: Some(term.clone()),
                    synonyms: Vec::new(),
                });
            }
        }
        for entries in &self.vocabulary {
            for (at, entry) in entries.iter().enumerate() {
                let Some(start) = find_phrase(&sequence, entry) else {
                    continue;
                };
                let others: Vec<Vec<String>> = entries
                    .iter()
                    .enumerate()
                    .filter(|(other, _)| *other != at)
                    .map(|(_, e)| {
                        e.iter()
                            .filter(|(_, stop)| !stop)
                            .map(|(t, _)| t.clone())
                            .collect::<Vec<_>>()
                    })
                    .filter(|e| !e.is_empty())
                    .collect();
                let span = &sequence[start..start + entry.len()];
                let words: Vec<&String> = span.iter().filter(|(_, s)| !s).map(|(t, _)| t).collect();
                if words.is_empty() {
                    // A phrase of stopwords (`who am i`): a concept of its own.
                    concepts.push(Concept {
                        term: None,
                        synonyms: others,
                    });
                    continue;
                }
                for word in words {
                    if let Some(concept) =
                        concepts.iter_mut().find(|c| c.term.as_ref() == Some(word))
                    {
                        concept.synonyms.extend(others.iter().cloned());
                    }
                }
            }
        }
        concepts
    }

    /// BM25 of one term in one tool.
    fn term_score(&self, doc: &DocTerms, term: &str) -> f64 {
        let Some(&tf) = doc.tf.get(term) else {
            return 0.0;
        };
        let (k1, b) = (self.options.k1, self.options.b);
        let norm = k1 * (1.0 - b + b * doc.length / self.average_length);
        self.idf(term) * tf * (k1 + 1.0) / (tf + norm)
    }

    /// The best matches for `query`, at most `limit`, best first (ties in catalog order).
    /// Tools that match too little of the query are never returned. A query of full names
    /// selects exactly those, however many: `limit` bounds a ranking, not an explicit choice.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&SearchDoc> {
        if let Some(selected) = self.select_by_names(query) {
            return selected;
        }
        if self.names_absent_service(query) {
            return Vec::new();
        }
        let found = self.ranked(query, limit);
        // A request to do what none of the tools found does ("archive the Slack channel", and
        // the Slack tools list, read and post) finds nothing.
        let asked = match self.options.actions {
            true => asked_actions(query),
            false => 0,
        };
        let does_it = |&index: &usize| self.actions[index] == 0 || self.actions[index] & asked != 0;
        if asked != 0 && !found.iter().any(does_it) {
            return Vec::new();
        }
        found.into_iter().map(|index| &self.docs[index]).collect()
    }

    /// The tools behind the floor, best first (their indices): by words, and by meaning too with
    /// the model.
    fn ranked(&self, query: &str, limit: usize) -> Vec<usize> {
        let (scored, best_match) = self.lexical(query);
        if let Some((embedder, vectors)) = &self.meaning {
            match embedder.embed(&[&self.meaning_query(query)], embedding::QUERY_TOKENS) {
                Ok(found) => {
                    return self.by_meaning_too(&scored, best_match, vectors, &found[0], limit);
                }
                Err(e) => tracing::warn!("tool search ranks this query by words only: {e}"),
            }
        }
        // The relevance floor: when no tool matches enough of the query, nothing does.
        if best_match < self.options.floor {
            return Vec::new();
        }
        Self::best_first(scored, limit)
    }

    /// The indices of the `limit` best of `scored` (score, tool index), ties in catalog order.
    fn best_first(mut scored: Vec<(f64, usize)>, limit: usize) -> Vec<usize> {
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, index)| index)
            .collect()
    }

    /// What the model reads of a query: the query, then the first other entry of each group of
    /// the vocabulary it says ("create an MR (pr, new)", "give the ticket to Alice (issue,
    /// assign)"): the vocabulary knows the field's words better than the model does (bench row 8).
    fn meaning_query(&self, query: &str) -> String {
        let sequence = Tokenizer::new(&self.options).sequence(query);
        let mut others: Vec<&str> = Vec::new();
        for (group, entries) in synonym_groups().iter().zip(&self.vocabulary) {
            let Some(said) = entries
                .iter()
                .position(|entry| find_phrase(&sequence, entry).is_some())
            else {
                continue;
            };
            let other = group[usize::from(said == 0)].as_str();
            if group.len() > 1 && !others.contains(&other) {
                others.push(other);
            }
        }
        if others.is_empty() {
            return query.to_string();
        }
        format!("{query} ({})", others.join(", "))
    }

    /// Whether `query` names a service (`services.txt`) that no tool of the set mentions.
    fn names_absent_service(&self, query: &str) -> bool {
        name_words(query).any(|word| name_forms(&word).any(|f| self.absent_services.contains(&f)))
    }

    /// The ranking of words and meaning together: each tool's word score (the best scaled to 1)
    /// plus `meaning` × its cosine to the query, behind the floor of both.
    fn by_meaning_too(
        &self,
        scored: &[(f64, usize)],
        best_match: f64,
        vectors: &[Vector],
        query: &[f32],
        limit: usize,
    ) -> Vec<usize> {
        let cosines: Vec<f64> = vectors
            .iter()
            .map(|v| f64::from(embedding::cosine(v, query)))
            .collect();
        let nearest = cosines.iter().copied().fold(f64::MIN, f64::max);
        let options = &self.options;
        let relevant = (best_match >= options.meaning_floor && nearest >= options.meaning_min)
            || nearest >= options.meaning_alone;
        if !relevant {
            return Vec::new();
        }
        let best_words = scored.iter().map(|s| s.0).fold(0.0, f64::max);
        let mut combined: Vec<(f64, usize)> = cosines
            .iter()
            .enumerate()
            .map(|(index, cosine)| (options.meaning * cosine, index))
            .collect();
        if best_words > 0.0 {
            for &(score, index) in scored {
                combined[index].0 += score / best_words;
            }
        }
        Self::best_first(combined, limit)
    }

    /// Each matching tool's score (by its index) and the largest share of the query's weight
    /// one tool matches.
    fn lexical(&self, query: &str) -> (Vec<(f64, usize)>, f64) {
        let concepts = self.concepts(query);
        if concepts.is_empty() || self.docs.is_empty() {
            return (Vec::new(), 0.0);
        }
        // A concept weighs its word's idf (a phrase of stopwords: the most); a word no tool
        // has (a name, a place: "Alice", "Tokyo") weighs less, and a number nothing.
        let max_idf = self.idf("");
        let weights: Vec<f64> = concepts
            .iter()
            .map(|c| match &c.term {
                Some(t) if t.chars().any(|c| c.is_ascii_digit()) => 0.0,
                Some(t) if !self.df.contains_key(t) => max_idf * self.options.unknown,
                Some(t) => self.idf(t),
                None => max_idf,
            })
            .collect();
        let total: f64 = weights.iter().sum();
        // Every term the query covers, synonyms included: for the whole-name bonus.
        let covered: HashSet<&str> = concepts
            .iter()
            .flat_map(|c| {
                c.term
                    .iter()
                    .map(String::as_str)
                    .chain(c.synonyms.iter().flatten().map(String::as_str))
            })
            .collect();
        let mut scored: Vec<(f64, usize)> = Vec::new();
        let mut best_match: f64 = 0.0;
        for (index, doc) in self.terms.iter().enumerate() {
            let mut score = 0.0;
            let mut matched = 0.0;
            for (concept, weight) in concepts.iter().zip(&weights) {
                let own = concept
                    .term
                    .as_ref()
                    .map_or(0.0, |t| self.term_score(doc, t));
                // A synonym (all its words) counts less than the word itself.
                let synonym = concept
                    .synonyms
                    .iter()
                    .map(|terms| terms.iter().map(|t| self.term_score(doc, t)).sum::<f64>())
                    .fold(0.0, f64::max)
                    * self.options.synonyms;
                let best = own.max(synonym);
                if best > 0.0 {
                    score += best;
                    matched += weight;
                }
            }
            if score <= 0.0 {
                continue;
            }
            best_match = best_match.max(matched / total);
            if self.options.name_bonus > 0.0 && !doc.name.is_empty() {
                let share = doc
                    .name
                    .iter()
                    .filter(|t| covered.contains(t.as_str()))
                    .count() as f64
                    / doc.name.len() as f64;
                score *= 1.0 + self.options.name_bonus * share.powf(self.options.name_power);
            }
            scored.push((score, index));
        }
        (scored, best_match)
    }

    /// A query whose comma-separated parts are all full names of indexed tools selects exactly
    /// those (BUD-4); `None` for any other query.
    fn select_by_names(&self, query: &str) -> Option<Vec<&SearchDoc>> {
        let parts: Vec<&str> = query
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return None;
        }
        let mut selected: Vec<&SearchDoc> = Vec::new();
        for part in parts {
            let doc = self.docs.iter().find(|d| d.full_name == part)?;
            if !selected.iter().any(|s| s.full_name == doc.full_name) {
                selected.push(doc);
            }
        }
        Some(selected)
    }
}

/// Where `phrase` occurs as consecutive words of `sequence`.
fn find_phrase(sequence: &[(String, bool)], phrase: &[(String, bool)]) -> Option<usize> {
    if phrase.is_empty() || phrase.len() > sequence.len() {
        return None;
    }
    (0..=sequence.len() - phrase.len()).find(|&start| {
        sequence[start..start + phrase.len()]
            .iter()
            .zip(phrase)
            .all(|(a, b)| a.0 == b.0)
    })
}

/// `mcp__<server>__<tool>` → (server, tool); a name of another shape is all tool.
fn split_full_name(full_name: &str) -> (&str, &str) {
    full_name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .unwrap_or(("", full_name))
}

/// The terms of a name or text as the ranking sees them: split on anything not alphanumeric
/// and on case changes (`readFile` → `read`, `file`; `HTTPServer` → `http`, `server`),
/// lowercased, common words dropped, stemmed.
pub fn words(text: &str) -> Vec<String> {
    Tokenizer::new(&RankOptions::default()).terms(text)
}

/// Calls `visit` with each lowercase word of `text`, reusing one buffer. An acronym's plural
/// stays one word (`PRs`, `URLs`).
fn for_each_word(text: &str, mut visit: impl FnMut(&str)) {
    let chars: Vec<char> = text.chars().collect();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for (at, &c) in chars.iter().enumerate() {
        let next = chars.get(at + 1).copied();
        if !c.is_alphanumeric() {
            emit(&mut current, &mut visit);
            previous = Some(c);
            continue;
        }
        let plural = next == Some('s') && !chars.get(at + 2).is_some_and(|c| c.is_alphanumeric());
        let lower_to_upper = c.is_uppercase() && previous.is_some_and(char::is_lowercase);
        let acronym_end = c.is_uppercase()
            && previous.is_some_and(char::is_uppercase)
            && next.is_some_and(char::is_lowercase)
            && !plural;
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
    if !current.is_empty() {
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
            ..SearchDoc::default()
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
        // Plurals of acronyms, stems, stopwords.
        assert_eq!(words("open PRs and MRs"), ["open", "pr", "mr"]);
        assert_eq!(words("create_entities"), ["creat", "entiti"]);
        assert_eq!(words("entity"), ["entiti"]);
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
        assert_eq!(
            names("mcp__fs__nope, read file", 5).first(),
            Some(&"mcp__fs__read_file")
        );
    }
}

// BUD-7: what the embedding model changes, on the recorded catalogs of 23 real servers (363
// tools): queries that share no word with their tool, which the words alone do not find, come
// first; a request no tool serves, on which the words alone return noise, finds nothing.
#[cfg(test)]
mod meaning_tests {
    use super::*;

    fn names<'a>(found: &[&'a SearchDoc]) -> Vec<&'a str> {
        found.iter().map(|d| d.full_name.as_str()).collect()
    }

    #[test]
    fn bud_7_meaning_finds_what_words_miss_and_keeps_noise_out() {
        if embedding::tests::installed_model().is_none() {
            return;
        }
        let docs = eval::catalog();
        assert!(docs.len() > 300, "{} recorded tools", docs.len());
        let words = ToolIndex::with_options(
            &docs,
            RankOptions {
                meaning: 0.0,
                ..RankOptions::default()
            },
        );
        let both = ToolIndex::new(&docs);
        assert!(!words.by_meaning() && both.by_meaning());
        for (query, tool) in [
            (
                "find repositories about rust async runtimes",
                "mcp__github__search_repositories",
            ),
            (
                "api reference of tokio from the upstream maintainers",
                "mcp__context7__query-docs",
            ),
            (
                "is the SLA breached for this support request",
                "mcp__atlassian__jira_get_issue_sla",
            ),
        ] {
            let by_words = names(&words.search(query, 5));
            assert!(!by_words.contains(&tool), "{query:?}: {by_words:?}");
            let by_both = names(&both.search(query, 5));
            assert!(by_both.contains(&tool), "{query:?}: {by_both:?}");
        }
        let noise = names(&words.search("order a pizza", 5));
        assert!(!noise.is_empty(), "the words alone found nothing");
        assert_eq!(names(&both.search("order a pizza", 5)), Vec::<&str>::new());
        // Full names still select exactly those, the model or not.
        let picked = "mcp__git__git_status, mcp__time__get_current_time";
        assert_eq!(
            names(&both.search(picked, 1)),
            ["mcp__git__git_status", "mcp__time__get_current_time"]
        );
    }
}

/// The full names of what a search found.
#[cfg(test)]
fn found_names(found: Vec<&SearchDoc>) -> Vec<String> {
    found.iter().map(|d| d.full_name.clone()).collect()
}

/// What a search by words finds first once `docs` has one tool more.
#[cfg(test)]
fn first_found_with(
    docs: &mut Vec<SearchDoc>,
    full_name: &str,
    description: &str,
    query: &str,
) -> Option<String> {
    docs.push(SearchDoc {
        full_name: full_name.into(),
        description: description.into(),
        ..SearchDoc::default()
    });
    let words_only = RankOptions {
        meaning: 0.0,
        ..RankOptions::default()
    };
    let index = ToolIndex::with_options(docs, words_only);
    found_names(index.search(query, 5)).into_iter().next()
}

// BUD-7: a request to do what the connected service's tools do not do ("archive the Slack
// channel", and the Slack tools list, read and post) finds nothing, the model or not; the same
// request finds the tool once a server has it, and a request for what the tools do finds them.
#[test]
fn bud_7_an_action_no_tool_found_does_finds_nothing() {
    let archive = "please archive the Slack channel #old-project";
    let mut docs = eval::catalog();
    for meaning in [RankOptions::default().meaning, 0.0] {
        let options = RankOptions {
            meaning,
            ..RankOptions::default()
        };
        let unchecked = ToolIndex::with_options(
            &docs,
            RankOptions {
                actions: false,
                ..options
            },
        );
        let noise = found_names(unchecked.search(archive, 5));
        assert!(
            noise.iter().any(|n| n.starts_with("mcp__slack__")),
            "{noise:?}"
        );
        let index = ToolIndex::with_options(&docs, options);
        assert_eq!(found_names(index.search(archive, 5)), Vec::<String>::new());
        let listed = found_names(index.search("list the Slack channels", 5));
        assert!(
            listed.contains(&"mcp__slack__slack_list_channels".to_string()),
            "{listed:?}"
        );
        // A verb that may say several things starts no check: "get rid of" deletes.
        let rid = found_names(index.search("get rid of Jira ticket CORE-20", 5));
        assert!(
            rid.contains(&"mcp__atlassian__jira_delete_issue".to_string()),
            "{rid:?}"
        );
    }
    let archiving = "mcp__slack__slack_archive_channel";
    let found = first_found_with(
        &mut docs,
        archiving,
        "Archive a channel in the workspace",
        archive,
    );
    assert_eq!(found.as_deref(), Some(archiving));
}

// BUD-7: a request for a service none of the tools serves finds nothing, the model or not, while
// the same request for a connected service finds its tool, and connecting the service's server
// makes the request find it.
#[test]
fn bud_7_a_service_no_tool_mentions_finds_nothing() {
    let mut docs = eval::catalog();
    for options in [
        RankOptions::default(),
        RankOptions {
            meaning: 0.0,
            ..RankOptions::default()
        },
    ] {
        let index = ToolIndex::with_options(&docs, options);
        for query in [
            "open a Linear issue for the login bug",
            "page the on-call engineer in PagerDuty",
            "put a Trello card on the board for the login bug",
        ] {
            assert_eq!(
                found_names(index.search(query, 5)),
                Vec::<String>::new(),
                "{query:?}"
            );
        }
        let github = found_names(index.search("open a GitHub issue for the login bug", 5));
        assert!(
            github.contains(&"mcp__github__create_issue".to_string()),
            "{github:?}"
        );
        // "linearly" (sequential-thinking's description) is not the name Linear.
        assert!(docs.iter().any(|d| d.description.contains("linearly")));
    }
    let linear = "mcp__linear__create_issue";
    let query = "open a Linear issue for the login bug";
    let found = first_found_with(&mut docs, linear, "Create an issue in Linear", query);
    assert_eq!(found.as_deref(), Some(linear));
}

/// BUD-7's measure over the recorded catalogs (`bench/fixtures/catalog`) and queries
/// (`bench/fixtures/tool_queries.json`, then `tool_queries_heldN.json`, one set each):
/// `WAVE_EVAL_HALF=tune|held|heldN|all` (`all`: the sets that have been seen, not the
/// newest, `UNSEEN`). `WAVE_EVAL_QUERY="…"` breaks one query down; `WAVE_EVAL_QUERY_TEXT`
/// (`nodigits`, `expand`, `nostop`, `syn2`, `synall`) and `WAVE_EVAL_TOOL_TEXT` (`noserver`,
/// `sentence`, `params`, `desc`) change what the model reads in `WAVE_EVAL_DUMP`'s cosines.
#[cfg(test)]
mod eval {
    use super::*;
    use serde_json::{Map, Value};

    fn fixtures() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/fixtures")
    }

    /// The recorded catalogs' tools, as `search_mcp_tools` indexes them.
    pub(super) fn catalog() -> Vec<SearchDoc> {
        let mut paths: Vec<_> = std::fs::read_dir(fixtures().join("catalog"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        let mut docs = Vec::new();
        for path in paths {
            let file: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let server = file["server"].as_str().unwrap();
            for tool in file["tools"].as_array().unwrap() {
                let empty = Map::new();
                docs.push(SearchDoc::new(
                    &format!("mcp__{server}__{}", tool["name"].as_str().unwrap()),
                    tool["title"].as_str(),
                    tool["description"].as_str(),
                    tool["inputSchema"].as_object().unwrap_or(&empty),
                    tool.get("annotations"),
                ));
            }
        }
        docs
    }

    /// The default and, with `WAVE_EVAL_ABLATE`, each part taken out.
    #[test]
    #[ignore = "prints BUD-7's hit rates: WAVE_EVAL_HALF=tune|held|all"]
    fn bud_7_eval() {
        let base = RankOptions::default();
        let mut runs = vec![("default", base)];
        if std::env::var_os("WAVE_EVAL_ABLATE").is_some() {
            let fields = RankOptions {
                title: 0.0,
                params: 0.0,
                annotations: 0.0,
                ..base
            };
            runs.extend([
                ("no title/schema/annotations", fields),
                (
                    "no schema",
                    RankOptions {
                        params: 0.0,
                        ..base
                    },
                ),
                (
                    "no synonyms",
                    RankOptions {
                        synonyms: 0.0,
                        ..base
                    },
                ),
                (
                    "no name bonus",
                    RankOptions {
                        name_bonus: 0.0,
                        ..base
                    },
                ),
                ("no floor", RankOptions { floor: 0.0, ..base }),
                (
                    "no services",
                    RankOptions {
                        services: false,
                        ..base
                    },
                ),
                (
                    "no action check",
                    RankOptions {
                        actions: false,
                        ..base
                    },
                ),
                (
                    "words only",
                    RankOptions {
                        meaning: 0.0,
                        ..base
                    },
                ),
                (
                    "no stemming",
                    RankOptions {
                        stem: false,
                        ..base
                    },
                ),
                (
                    "no stopwords",
                    RankOptions {
                        stopwords: false,
                        ..base
                    },
                ),
            ]);
        }
        if let Ok(spec) = std::env::var("WAVE_EVAL_OPTIONS") {
            // name,title,description,params,annotations,synonyms,name_bonus,floor
            let v: Vec<f64> = spec.split(',').map(|x| x.parse().unwrap()).collect();
            runs = vec![(
                "options",
                RankOptions {
                    name: v[0],
                    title: v[1],
                    description: v[2],
                    params: v[3],
                    annotations: v[4],
                    synonyms: v[5],
                    name_bonus: v[6],
                    floor: v[7],
                    unknown: v.get(8).copied().unwrap_or(base.unknown),
                    server: v.get(9).copied().unwrap_or(base.server),
                    ..base
                },
            )];
        }
        for (label, options) in runs {
            eval(label, options);
        }
        // WAVE_EVAL_GRID: one option varied at a time, a line each.
        if std::env::var_os("WAVE_EVAL_GRID").is_some() {
            type Set = fn(&mut RankOptions, f64);
            let knobs: [(&str, Set, &[f64]); 12] = [
                ("name_power", |o, v| o.name_power = v, &[1.0, 2.0, 4.0]),
                ("k1", |o, v| o.k1 = v, &[0.8, 1.6, 2.0]),
                ("b", |o, v| o.b = v, &[0.75, 1.0]),
                ("name", |o, v| o.name = v, &[1.5, 2.0, 4.0, 5.0]),
                ("server", |o, v| o.server = v, &[0.5, 1.0, 2.0]),
                ("title", |o, v| o.title = v, &[1.0, 3.0]),
                ("params", |o, v| o.params = v, &[0.1, 0.5, 1.0]),
                ("annotations", |o, v| o.annotations = v, &[0.0, 1.0]),
                (
                    "synonyms",
                    |o, v| o.synonyms = v,
                    &[0.4, 0.5, 0.7, 0.8, 1.0],
                ),
                ("name_bonus", |o, v| o.name_bonus = v, &[0.25, 1.0, 2.0]),
                ("floor", |o, v| o.floor = v, &[0.3, 0.35, 0.45, 0.5]),
                ("unknown", |o, v| o.unknown = v, &[0.3, 0.4, 0.5, 0.8]),
            ];
            for (knob, set, values) in knobs {
                for &value in values {
                    let mut options = base;
                    set(&mut options, value);
                    eval(&format!("{knob}={value}"), options);
                }
            }
        }
    }

    /// The newest held-out set, written blind and measured once: never in `all` nor dumped.
    const UNSEEN: &str = "held9";

    fn eval(label: &str, options: RankOptions) {
        let half = std::env::var("WAVE_EVAL_HALF").unwrap_or_else(|_| "tune".into());
        let docs = catalog();
        let index = ToolIndex::with_options(&docs, options);
        // The first set (halves tune and held) and every later held-out set.
        let queries = wave_mcp_testkit::catalog::tool_queries();
        if let Some(path) = std::env::var_os("WAVE_EVAL_DUMP") {
            let variant_vectors = match (std::env::var("WAVE_EVAL_TOOL_TEXT").ok(), &index.meaning)
            {
                (Some(v), Some((embedder, _))) => {
                    let texts: Vec<String> =
                        docs.iter().map(|d| variant_tool_text(d, &v)).collect();
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    let tokens = std::env::var("WAVE_EVAL_TOOL_TOKENS")
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(embedding::TOOL_TOKENS);
                    Some(embedder.embed(&refs, tokens).unwrap())
                }
                _ => None,
            };
            // Never the unseen set: it is measured once, not tuned on.
            let dump: Vec<Value> = queries
                .iter()
                .filter(|q| q.half != UNSEEN)
                .map(|q| {
                    let query = q.query.as_str();
                    let (scored, best) = index.lexical(query);
                    let cosines: Vec<f32> = match &index.meaning {
                        Some((embedder, vectors)) => {
                            let vectors = variant_vectors.as_ref().unwrap_or(vectors);
                            let text = match std::env::var("WAVE_EVAL_QUERY_TEXT") {
                                // `prod…`: the variant on top of what the search reads.
                                Ok(v) if v.starts_with("prod") => variant_query(&index.meaning_query(query)),
                                Ok(_) => variant_query(query),
                                Err(_) => index.meaning_query(query),
                            };
                            let found = embedder.embed(&[text.as_str()], embedding::QUERY_TOKENS).unwrap();
                            vectors.iter().map(|v| embedding::cosine(v, &found[0])).collect()
                        }
                        None => Vec::new(),
                    };
                    serde_json::json!({"query": query, "scores": scored, "match": best, "cosines": cosines, "absent": index.names_absent_service(query)})
                })
                .collect();
            let names: Vec<&str> = docs.iter().map(|d| d.full_name.as_str()).collect();
            let out = serde_json::json!({"tools": names, "queries": dump});
            std::fs::write(path, out.to_string()).unwrap();
        }
        if let Ok(query) = std::env::var("WAVE_EVAL_QUERY") {
            // One query's parts: the floor's inputs and the best tools by each signal.
            let (mut scored, best) = index.lexical(&query);
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            println!("absent service: {}", index.names_absent_service(&query));
            println!("asked actions: {:#b}", asked_actions(&query));
            println!(
                "concepts: {:?}",
                index
                    .concepts(&query)
                    .iter()
                    .map(|c| (&c.term, &c.synonyms))
                    .collect::<Vec<_>>()
            );
            println!(
                "best match {best:.3}; words: {:?}",
                scored
                    .iter()
                    .take(6)
                    .map(|(s, i)| (docs[*i].full_name.as_str(), (s * 100.0).round() / 100.0))
                    .collect::<Vec<_>>()
            );
            if let Some((embedder, vectors)) = &index.meaning {
                let text = index.meaning_query(&query);
                println!("the model reads: {text:?}");
                let found = embedder
                    .embed(&[text.as_str()], embedding::QUERY_TOKENS)
                    .unwrap();
                let mut cos: Vec<(f32, usize)> = vectors
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (embedding::cosine(v, &found[0]), i))
                    .collect();
                cos.sort_by(|a, b| b.0.total_cmp(&a.0));
                println!(
                    "meaning: {:?}",
                    cos.iter()
                        .take(6)
                        .map(|(c, i)| (docs[*i].full_name.as_str(), (c * 1000.0).round() / 1000.0))
                        .collect::<Vec<_>>()
                );
            }
            println!(
                "found: {:?}",
                index
                    .search(&query, 5)
                    .iter()
                    .map(|d| d.full_name.as_str())
                    .collect::<Vec<_>>()
            );
            return;
        }
        let (mut n, mut hit, mut pn, mut phit, mut en, mut ehit) = (0, 0, 0, 0, 0, 0);
        for q in &queries {
            // `all`: the sets that have been seen (not the newest).
            let wanted = match half.as_str() {
                "all" => q.half != UNSEEN,
                half => q.half == half,
            };
            if !wanted {
                continue;
            }
            let query = q.query.as_str();
            let found: Vec<&str> = index
                .search(query, 5)
                .iter()
                .map(|d| d.full_name.as_str())
                .collect();
            match q.tool.as_deref() {
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
                    if !q.shares_name_word {
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
            "BUD-7 {half} {label:30} ({} tools{}): top-5 {hit}/{n} = {:.1} %; no shared word {phit}/{pn} = {:.1} %; nothing-matches empty {ehit}/{en} = {:.1} %",
            docs.len(),
            if index.by_meaning() {
                ", by meaning too"
            } else {
                ", by words only"
            },
            pct(hit, n),
            pct(phit, pn),
            pct(ehit, en)
        );
    }

    fn variant_tool_text(d: &SearchDoc, v: &str) -> String {
        let (server, tool) = split_full_name(&d.full_name);
        let spaced = |name: &str| {
            let mut words = Vec::new();
            for_each_word(name, |w| words.push(w.to_string()));
            words.join(" ")
        };
        let first_sentence = d.description.split(". ").next().unwrap_or("").to_string();
        let params: Vec<&str> = d
            .params
            .lines()
            .filter(|l| !l.contains(' '))
            .take(6)
            .collect();
        match v {
            "noserver" => format!("{}: {} {}", spaced(tool), d.title, d.description),
            "sentence" => format!("{} {}: {}", spaced(server), spaced(tool), first_sentence),
            "params" => format!(
                "{} {}: {} {} ({})",
                spaced(server),
                spaced(tool),
                d.title,
                first_sentence,
                params.join(", ")
            ),
            "desc" => format!("{} {}", d.title, d.description),
            _ => d.meaning_text(),
        }
    }

    fn variant_query(query: &str) -> String {
        let v = std::env::var("WAVE_EVAL_QUERY_TEXT").unwrap_or_default();
        let mut words: Vec<String> = query.split_whitespace().map(str::to_string).collect();
        if v.contains("nodigits") {
            words.retain(|w| !w.chars().any(|c| c.is_ascii_digit()));
        }
        if v.contains("expand") {
            let mut out = Vec::new();
            for w in words {
                let bare = w
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                out.push(w);
                let group = synonym_groups().iter().find(|g| g.contains(&bare));
                let long = group.and_then(|g| {
                    g.iter()
                        .filter(|e| e.len() > 3)
                        .max_by_key(|e| e.contains(' '))
                });
                if let (true, Some(long)) = (bare.len() <= 3 && !bare.is_empty(), long) {
                    out.push(format!("({long})"));
                }
            }
            words = out;
        }
        if v.contains("nostop") {
            words.retain(|w| !STOPWORDS.contains(&w.to_lowercase().as_str()));
        }
        if v.contains("syn2") || v.contains("synall") {
            let lower = format!(" {} ", words.join(" ").to_lowercase());
            let mut extra = Vec::new();
            for group in synonym_groups() {
                if let Some(hit) = group.iter().find(|e| lower.contains(&format!(" {e} "))) {
                    extra.extend(
                        group
                            .iter()
                            .filter(|e| *e != hit)
                            .take(if v.contains("synall") { usize::MAX } else { 2 })
                            .cloned(),
                    );
                }
            }
            if !extra.is_empty() {
                words.push(format!("({})", extra.join(", ")));
            }
        }
        words.join(" ")
    }
}
