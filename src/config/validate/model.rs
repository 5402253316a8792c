//! `[settings.search] model`: the transformer tier's directory, checked at load (files,
//! config, tensor shapes from the weights' header) so a bad directory is a config error
//! with its line, not a silent fallback to a weaker tier at run time.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::super::error::{ConfigError, Source};
use super::super::raw::S;
use super::Env;
use crate::search::Semantic;

/// Why a model directory cannot be used; the end of a `[settings.search]` error.
#[derive(Debug, thiserror::Error)]
enum ModelError {
    /// The directory's files, config or weights are wrong (the encoder says which).
    #[cfg(feature = "model")]
    #[error(transparent)]
    Dir(#[from] crate::search::transformer::EncoderError),
    #[cfg(not(feature = "model"))]
    #[error(
        "this mcp-defer was built without the `model` feature (the transformer tier); \
         rebuild with default features, or write `semantic = \"static\"`"
    )]
    NotBuilt,
}

/// `[settings.search] model`: required by `semantic = "model"` and only by it; the
/// directory is checked here (files, config, tensor shapes from the weights' header), so a
/// bad directory is a config error at load, not a silent fallback at run time.
pub(super) fn build_model(
    semantic: Semantic,
    semantic_span: Option<Range<usize>>,
    model: Option<S<String>>,
    source: &Source<'_>,
    env: Env<'_>,
) -> Result<Option<PathBuf>, ConfigError> {
    match (semantic, model) {
        // No `model`: the directory `mcp-defer model fetch` fills.
        (Semantic::Model, None) => match default_model_dir(env) {
            Some(path) => {
                check_model(&path).map_err(|message| {
                    source.error(
                        semantic_span.clone().unwrap_or(0..0),
                        format!("[settings.search] `semantic = \"model\"`: {message}"),
                    )
                })?;
                Ok(Some(path))
            }
            None => Err(source.error(
                semantic_span.unwrap_or(0..0),
                "[settings.search] `semantic = \"model\"` needs `model = \"<dir>\"`, the \
                 directory of a sentence-transformers model (config.json, tokenizer.json, \
                 model.safetensors), e.g. `model = \".models/all-MiniLM-L6-v2\"`; neither \
                 XDG_DATA_HOME nor HOME is set for the default one"
                    .to_owned(),
            )),
        },
        (Semantic::Model, Some(dir)) => {
            let span = dir.span();
            let path = PathBuf::from(dir.into_inner());
            let path = match source.path().parent() {
                Some(parent) if path.is_relative() => parent.join(path),
                _ => path,
            };
            check_model(&path).map_err(|message| {
                source.error(span, format!("[settings.search] `model`: {message}"))
            })?;
            Ok(Some(path))
        }
        (_, Some(dir)) => Err(source.error(
            dir.span(),
            "[settings.search] `model` is only read with `semantic = \"model\"`; add that \
             line, or remove `model`"
                .to_owned(),
        )),
        (_, None) => Ok(None),
    }
}

/// Where `mcp-defer model fetch` puts the model (`None` without a home directory).
#[cfg(feature = "model")]
fn default_model_dir(env: Env<'_>) -> Option<PathBuf> {
    crate::search::transformer::default_dir_in(env)
}

#[cfg(not(feature = "model"))]
fn default_model_dir(_: Env<'_>) -> Option<PathBuf> {
    Some(PathBuf::from("all-MiniLM-L6-v2"))
}

#[cfg(feature = "model")]
fn check_model(path: &Path) -> Result<(), ModelError> {
    crate::search::transformer::ModelDir::check(path)?;
    Ok(())
}

#[cfg(not(feature = "model"))]
fn check_model(_: &Path) -> Result<(), ModelError> {
    Err(ModelError::NotBuilt)
}
