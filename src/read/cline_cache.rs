//! Cline providers whose handler reports a request's input tokens with the
//! cached ones in them, and the cached ones again apart: compactor reads
//! `tokensIn` as the uncached input (Anthropic's, OpenRouter's and most
//! others' meaning), so for these the cache is counted twice. Which versions
//! do so is not in the task's files: it is said, not corrected.

use crate::model::Session;
use std::path::Path;

/// Provider ids (`task_metadata.json` `model_usage[].model_provider_id`,
/// `modelInfo.providerId`) whose handler, in some or all of its versions,
/// yields `inputTokens` as the whole prompt (`prompt_tokens`, or the Responses
/// API's `input_tokens`) with `cacheReadTokens` (and for some, cache misses as
/// `cacheWriteTokens`) besides: cline `openai.ts` before it subtracted them,
/// `litellm.ts`, `lmstudio.ts`, `openai-codex.ts`, `requesty.ts`, `xai.ts`,
/// `zai.ts`; `openai-compatible` is the newer SDK's name of `openai`.
const INPUT_WITH_CACHE: [&str; 8] =
    ["litellm", "lmstudio", "openai", "openai-codex", "openai-compatible", "requesty", "xai", "zai"];

const WARNING_START: &str = "Cline's ";

/// Say, once per session, that its requests' prompt sizes may count the
/// cache twice when a provider it used is one of those and it recorded cache.
pub(super) fn warn_cache_in_input<'a>(s: &mut Session, path: &Path, providers: impl IntoIterator<Item = &'a str>) {
    let Some(provider) = providers.into_iter().find_map(|p| INPUT_WITH_CACHE.iter().find(|k| **k == p)) else {
        return;
    };
    let cached = s.calls.iter().filter_map(|c| c.usage).filter(|u| u.cache_read > 0 || u.cache_write > 0).count();
    if cached == 0 || s.diagnostics.messages.iter().any(|d| d.message.starts_with(WARNING_START)) {
        return;
    }
    let why = format!(
        "{WARNING_START}`{provider}` provider reports, in some or all of its versions, the input tokens with the \
         cached ones in them and the cached ones again apart: the prompt sizes of {cached} request(s) that recorded \
         cache tokens may count them twice"
    );
    s.diagnostics.warn(path, 0, why);
}
