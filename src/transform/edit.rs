//! Edits of a text (`(start, end, new text)` replacements), applied in one pass, and what
//! the scratch threading's edits are and cannot reach ([`Threading`]).

use crate::obstacle::Obstacle;

/// Replacements `(start, end, new text)` of a text's byte spans.
pub(crate) type Edits = Vec<(usize, usize, String)>;

/// `text` with the replacements `(start, end, new text)` (disjoint; of several at one offset,
/// the last given comes first), in one pass (replacing in place, edit by edit, took time
/// quadratic in the number of edits).
pub(crate) fn apply_edits(text: &str, mut edits: Edits) -> String {
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&i| (edits[i].0, std::cmp::Reverse(i)));
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.2.len()).sum::<usize>());
    let mut at = 0;
    for i in order {
        let (start, end, new) = std::mem::take(&mut edits[i]);
        out.push_str(&text[at.min(start)..start]);
        out.push_str(&new);
        at = at.max(end);
    }
    out.push_str(&text[at..]);
    out
}

/// How the emulated scratch is threaded through a source ([`super::layer::scratch_threading`]).
#[derive(Debug, Default)]
pub(crate) struct Threading {
    /// The edits `(start, end, text)`; kernels the scanner read get their parameter elsewhere.
    pub(crate) edits: Edits,
    /// Where the edits cannot reach a kernel's parameters (a kernel keyword in a macro whose
    /// parameter list the macro does not write), described; `None` when they reach every one.
    pub(crate) unreached: Option<Obstacle>,
    /// A function made by a macro (not a kernel) that uses the layer: its name, and so its
    /// calls, cannot be told, so nothing may stand in for its scratch.
    pub(crate) unthreadable: Option<Obstacle>,
}
