//! `max_output_tokens`: a proxied tool result over the budget is cut, with a note saying
//! how much was cut and how to get the rest. A pure function of the result and the budget.
//!
//! Sizes use the one estimate of [`crate::tokens`] (bytes / 4). Clients show the model
//! either the content blocks or `structuredContent` (Claude Code and Codex prefer the latter
//! when both are present, DESIGN.md section 5), so each of the two must fit on its own:
//!
//! - **Content blocks**, in order, share the budget. Text (and an embedded text resource) is
//!   cut at a character boundary where the budget ends; later text blocks are dropped.
//!   Images, audio and blob resources are never cut: one that does not fit whole is dropped.
//!   A resource link counts its serialized size like any block: one that does not fit
//!   whole is kept bare (`uri`, `name`, `mimeType`, `size`: the way to the rest) when that
//!   fits, and dropped otherwise. Its text fields (a description can be any size) are no
//!   way around the budget.
//! - **`structuredContent`** is never cut mid-value: whole trailing items of its arrays are
//!   dropped, largest array first, until it fits. Objects keep every key, so required fields
//!   stay and the tool's `outputSchema` still holds (unless it sets `minItems`). A value that
//!   does not fit even with its arrays emptied is left whole: its shape is the tool's
//!   contract, and cutting a string or a key would break it.
//! - The note is appended as a last text block. It is not counted against the budget.

use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
use serde_json::Value;

use crate::tokens;

/// What was cut, for the note.
#[derive(Debug, Default, PartialEq, Eq)]
struct Cut {
    /// Characters and bytes of text removed, and the characters there were.
    text_chars: usize,
    text_bytes: usize,
    text_total_chars: usize,
    /// Images, audio and blob resources dropped.
    media: usize,
    /// Resource links kept without their description, title, icons and metadata, and
    /// those dropped whole; the bytes both removed.
    links_bare: usize,
    links_dropped: usize,
    link_bytes: usize,
    /// Items dropped from `structuredContent` arrays, and the items they had.
    items: usize,
    items_total: usize,
    /// `structuredContent` bytes removed.
    structured_bytes: usize,
}

impl Cut {
    fn any(&self) -> bool {
        self.text_bytes > 0
            || self.media > 0
            || self.items > 0
            || self.links_bare > 0
            || self.links_dropped > 0
    }
}

/// Cuts `result` to `max_tokens` (see the module doc for the rule); `None` leaves it as is.
pub(crate) fn apply(result: &mut CallToolResult, max_tokens: Option<usize>) {
    let Some(max_tokens) = max_tokens else { return };
    let budget = tokens::bytes_for(max_tokens);
    let mut cut = Cut::default();
    cut_content(&mut result.content, budget, &mut cut);
    if let Some(structured) = &mut result.structured_content {
        cut_structured(structured, budget, &mut cut);
    }
    if cut.any() {
        result
            .content
            .push(ContentBlock::text(note(&cut, max_tokens)));
    }
}

fn cut_content(blocks: &mut Vec<ContentBlock>, budget: usize, cut: &mut Cut) {
    let mut left = budget;
    let mut kept = Vec::with_capacity(blocks.len());
    for mut block in blocks.drain(..) {
        let keep = match &mut block {
            ContentBlock::Text(text) => cut_text(&mut text.text, &mut left, cut),
            ContentBlock::Resource(resource) => match &mut resource.resource {
                ResourceContents::TextResourceContents { text, .. } => {
                    cut_text(text, &mut left, cut)
                }
                ResourceContents::BlobResourceContents { blob, .. } => {
                    fits_whole(blob.len(), &mut left, cut)
                }
                #[allow(unreachable_patterns)] // rmcp may add kinds of resource contents.
                _ => true,
            },
            ContentBlock::Image(image) => fits_whole(image.data.len(), &mut left, cut),
            ContentBlock::Audio(audio) => fits_whole(audio.data.len(), &mut left, cut),
            ContentBlock::ResourceLink(link) => cut_link(link, &mut left, cut),
            // Kinds rmcp may add: kept, not counted.
            #[allow(unreachable_patterns)]
            _ => true,
        };
        if keep {
            kept.push(block);
        }
    }
    *blocks = kept;
}

/// Cuts `text` to what is `left` of the budget at a character boundary; `false` when
/// nothing of it is left, so the block is dropped.
fn cut_text(text: &mut String, left: &mut usize, cut: &mut Cut) -> bool {
    cut.text_total_chars += text.chars().count();
    if text.len() <= *left {
        *left -= text.len();
        return true;
    }
    let mut end = *left;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    cut.text_chars += text[end..].chars().count();
    cut.text_bytes += text.len() - end;
    text.truncate(end);
    *left = 0;
    !text.is_empty()
}

/// Whether a block of `size` bytes that cannot be cut fits in what is `left`.
fn fits_whole(size: usize, left: &mut usize, cut: &mut Cut) -> bool {
    if size <= *left {
        *left -= size;
        true
    } else {
        cut.media += 1;
        false
    }
}

/// A resource link's serialized size against what is `left`: kept whole when it fits,
/// else kept bare (what it takes to read the resource) when that fits, else dropped.
fn cut_link(link: &mut Resource, left: &mut usize, cut: &mut Cut) -> bool {
    // The block's tag, which the link's own serialization lacks.
    const TAG: usize = r#""type":"resource_link","#.len();
    let size = serialized_len(link) + TAG;
    if size <= *left {
        *left -= size;
        return true;
    }
    let mut bare = Resource::new(
        std::mem::take(&mut link.uri),
        std::mem::take(&mut link.name),
    );
    bare.mime_type = link.mime_type.take();
    bare.size = link.size;
    let bare_size = serialized_len(&bare) + TAG;
    *link = bare;
    if bare_size <= *left {
        *left -= bare_size;
        cut.links_bare += 1;
        cut.link_bytes += size - bare_size;
        true
    } else {
        cut.links_dropped += 1;
        cut.link_bytes += size;
        false
    }
}

fn serialized_len(value: &impl serde::Serialize) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

/// Drops trailing array items, largest array first, until `value` serializes within
/// `budget` bytes or has no items left to drop.
fn cut_structured(value: &mut Value, budget: usize, cut: &mut Cut) {
    let mut size = json_len(value);
    if size <= budget {
        return;
    }
    let before = size;
    let mut arrays = Vec::new();
    array_pointers(value, String::new(), &mut arrays);
    cut.items_total = arrays
        .iter()
        .filter_map(|p| value.pointer(p).and_then(Value::as_array).map(Vec::len))
        .sum();
    // Largest first: the fewest items go, and the small arrays (often the summary a model
    // needs most) stay whole.
    arrays.sort_by_key(|p| std::cmp::Reverse(value.pointer(p).map_or(0, json_len)));
    for pointer in arrays {
        let Some(Value::Array(items)) = value.pointer_mut(&pointer) else {
            // Inside an item an earlier round dropped.
            continue;
        };
        while size > budget {
            let Some(item) = items.pop() else { break };
            // The item and the comma before it (none for the last one left).
            size -= json_len(&item) + usize::from(!items.is_empty());
            cut.items += 1;
        }
        if size <= budget {
            break;
        }
    }
    cut.structured_bytes = before - size;
}

/// JSON pointers of every array in `value`, outermost first.
fn array_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            out.push(at.clone());
            for (i, item) in items.iter().enumerate() {
                array_pointers(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                array_pointers(item, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
}

fn json_len(value: &Value) -> usize {
    serialized_len(value)
}

/// What was cut, in figures, and how to get the rest.
fn note(cut: &Cut, max_tokens: usize) -> String {
    let mut parts = Vec::new();
    if cut.text_bytes > 0 {
        parts.push(format!(
            "{} of {} characters of text (≈{} tokens)",
            cut.text_chars,
            cut.text_total_chars,
            tokens::estimate(cut.text_bytes)
        ));
    }
    if cut.media > 0 {
        parts.push(format!(
            "{} image, audio or binary block{}",
            cut.media,
            if cut.media == 1 { "" } else { "s" }
        ));
    }
    if cut.links_bare + cut.links_dropped > 0 {
        let links = |n: usize| format!("{n} resource link{}", if n == 1 { "" } else { "s" });
        let mut said = Vec::new();
        if cut.links_bare > 0 {
            said.push(format!(
                "the description, title and metadata of {}",
                links(cut.links_bare)
            ));
        }
        if cut.links_dropped > 0 {
            said.push(links(cut.links_dropped));
        }
        parts.push(format!(
            "{} (≈{} tokens)",
            said.join(" and "),
            tokens::estimate(cut.link_bytes)
        ));
    }
    if cut.items > 0 {
        parts.push(format!(
            "the last {} of {} items of the structured result's lists (≈{} tokens)",
            cut.items,
            cut.items_total,
            tokens::estimate(cut.structured_bytes)
        ));
    }
    format!(
        "[mcp-defer: this result was longer than max_output_tokens = {max_tokens} and was cut: \
         {} removed. To get the rest, call the tool again for less or for the next part, if \
         it has arguments for that (a page, cursor, offset or limit, or a narrower query).]",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;

    fn texts(result: &CallToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .filter_map(|b| b.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[test]
    fn within_the_budget_nothing_changes() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("short")]);
        result.structured_content = Some(json!({"a": [1, 2, 3]}));
        let before = result.clone();
        apply(&mut result, Some(100));
        assert_eq!(result, before);
        apply(&mut result, None);
        assert_eq!(result, before);
    }

    #[test]
    fn text_is_cut_at_a_character_boundary_with_a_note() {
        // 10 tokens = 40 bytes; "é" is 2 bytes, so byte 40 falls inside the 14th "é".
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(format!("abc{}", "é".repeat(30))),
            ContentBlock::text("dropped entirely"),
        ]);
        apply(&mut result, Some(10));
        let texts = texts(&result);
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(texts[0], format!("abc{}", "é".repeat(18)));
        assert!(texts[0].len() <= 40);
        assert!(
            texts[1].contains("longer than max_output_tokens = 10")
                && texts[1].contains("28 of 49 characters of text")
                && texts[1].contains("page, cursor, offset or limit"),
            "{}",
            texts[1]
        );
    }

    #[test]
    fn images_that_do_not_fit_whole_are_dropped() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::image("A".repeat(30), "image/png"),
            ContentBlock::text("caption"),
            ContentBlock::image("B".repeat(30), "image/png"),
        ]);
        apply(&mut result, Some(10));
        assert!(result.content[0].as_image().is_some());
        assert_eq!(result.content[1].as_text().unwrap().text, "caption");
        let note = &result.content[2].as_text().unwrap().text;
        assert!(
            note.contains("1 image, audio or binary block removed"),
            "{note}"
        );
        assert_eq!(result.content.len(), 3);
    }

    #[test]
    fn structured_content_loses_whole_trailing_items_largest_array_first() {
        let items: Vec<_> = (0..50)
            .map(|i| json!({"id": i, "name": format!("item {i}")}))
            .collect();
        let structured = json!({"total": 50, "tags": ["a", "b"], "items": items});
        let mut result = CallToolResult::success(vec![ContentBlock::text("x")]);
        result.structured_content = Some(structured);
        apply(&mut result, Some(100));
        let after = result.structured_content.clone().unwrap();
        assert!(json_len(&after) <= 400, "{}", json_len(&after));
        assert_eq!(after["total"], 50, "keys are never dropped");
        assert_eq!(
            after["tags"],
            json!(["a", "b"]),
            "the small array stays whole"
        );
        let kept = after["items"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 50);
        for (i, item) in kept.iter().enumerate() {
            assert_eq!(
                item,
                &json!({"id": i, "name": format!("item {i}")}),
                "whole items, in order"
            );
        }
        let note = texts(&result).pop().unwrap();
        assert!(
            note.contains(&format!("the last {} of 52 items", 50 - kept.len())),
            "{note}"
        );
    }

    #[test]
    fn resource_links_count_and_are_kept_bare_or_dropped() {
        let link = |i: usize, chars: usize| {
            let mut link = Resource::new(format!("file:///{i}"), format!("{i}"));
            link.description = Some("d".repeat(chars));
            ContentBlock::resource_link(link)
        };
        let mut result =
            CallToolResult::success(vec![link(0, 10), link(1, 100_000), link(2, 100_000)]);
        apply(&mut result, Some(40)); // 160 bytes
        let kept: Vec<_> = result
            .content
            .iter()
            .filter_map(|b| b.as_resource_link())
            .collect();
        assert_eq!(kept.len(), 2, "{:?}", result.content);
        assert_eq!(
            kept[0].description.as_deref(),
            Some("dddddddddd"),
            "fits whole"
        );
        assert_eq!(
            (kept[1].uri.as_str(), kept[1].description.as_ref()),
            ("file:///1", None)
        );
        let size: usize = result.content[..2]
            .iter()
            .map(|b| serde_json::to_vec(b).unwrap().len())
            .sum();
        assert!(size <= 160, "{size}");
        let note = texts(&result).pop().unwrap();
        assert!(
            note.contains(
                "the description, title and metadata of 1 resource link and 1 resource link"
            ),
            "{note}"
        );
    }

    #[test]
    fn structured_content_without_arrays_is_left_whole() {
        let big = json!({"blob": "x".repeat(1000)});
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(big.clone());
        apply(&mut result, Some(10));
        assert_eq!(result.structured_content, Some(big));
        assert!(result.content.is_empty(), "nothing was cut, so no note");
    }
}
