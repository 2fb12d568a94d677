//! One build's pipeline over the user's source, each text scanned once: [`read`] moves the
//! collectives under divergent conditions where collectives are work-group barriers
//! ([`super::hoist`]) and reads the [`SourceFacts`] from the scan of the text it ends with;
//! [`Source::rewrite`] writes the text each build attempt compiles, reusing that scan and, for
//! the texts its rewrites produce, the scans of earlier attempts (other sub-group sizes,
//! fallbacks).

use super::facts::SourceFacts;
use super::hoist;
use super::source::{KernelDecl, Scanned};
use super::variant::VariantKind;
use super::{apply_edits, checked, rounded, scratch_param_edit, Rewrites};
use crate::device::ShuffleBackend;
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::HashMap;

/// The user's source as one build read it ([`read`]).
pub(crate) struct Source<'a> {
    /// The text the build compiles: the user's, collectives moved where the backend needs it.
    pub(crate) text: &'a str,
    /// Its one scan (or why the scanner could not read it).
    scanned: std::result::Result<Scanned<'a>, Error>,
    /// What the scan found.
    pub(crate) facts: SourceFacts,
    /// What scans of the rewritten texts found, by text.
    memo: RefCell<Memo>,
}

/// The kernels of each rewritten text scanned, and the checked variants written from a scan
/// (by text, kernels checked and kernels rounded too).
#[derive(Default)]
struct Memo {
    kernels: HashMap<String, Result<Vec<KernelDecl>>>,
    checked: HashMap<(String, Vec<String>, Vec<String>), String>,
}

/// Reads `src` for a build on a device of `backend` whose collectives are work-group barriers
/// where `collective` (which tells them) is given: there the collectives under conditions shown
/// uniform are moved first ([`hoist::next_text`], a round of moves per scan, each round's text
/// scanned once), then
/// the facts are read from the last text's scan; `then` gets the result.
pub(crate) fn read<R>(
    src: &str,
    backend: ShuffleBackend,
    collective: Option<fn(&str) -> bool>,
    then: impl FnOnce(Source<'_>) -> Result<R>,
) -> Result<R> {
    let mut text = src.to_string();
    let mut n = 0;
    let scanned = loop {
        let s = Scanned::new(&text);
        let next = match (&s, collective) {
            (Ok(s), Some(c)) => hoist::next_text(s, c, n),
            _ => None,
        };
        let Some((next, moved)) = next else { break s };
        drop(s);
        (text, n) = (next, n + moved);
    };
    let facts = SourceFacts::of_scan(&text, scanned.as_ref(), backend, collective)?;
    then(Source {
        text: &text,
        scanned,
        facts,
        memo: RefCell::default(),
    })
}

impl Source<'_> {
    /// The text of one build attempt for sub-group `size`, with clgroups' rewrites (none of
    /// them adds a line): the emulated scratch threaded through the layer's users (also helpers
    /// no kernel calls: they must compile too), then, with `variants`, checked and rounded
    /// variants after their originals, then pinned sizes. `plan` says what each kernel gets.
    pub(crate) fn rewrite(
        &self,
        plan: impl Fn(&str) -> Rewrites,
        variants: bool,
        size: usize,
    ) -> Result<String> {
        let kernels = &self.facts.kernels;
        let mut edits: Vec<(usize, usize, String)> = kernels
            .iter()
            .filter(|k| plan(&k.name).scratch)
            .map(scratch_param_edit)
            .collect();
        edits.extend(self.facts.scratch_edits.iter().cloned());
        let user = apply_edits(self.text, edits);
        // Originals stay beside their variants: ND-range launches and argument checks use them.
        let user = if variants {
            let user = self.with_checked(user, &plan)?;
            let to_round: Vec<KernelDecl> = self
                .kernels(&user)?
                .into_iter()
                .filter(|k| plan(&k.name).round && !plan(&k.name).check)
                .collect();
            rounded::with_rounded_variants(&user, &to_round, true)?
        } else {
            user
        };
        // The pinned size, last, on the kernels (and their checked variants) that get it.
        let pinned = |name: &str| {
            let base = match VariantKind::parse(name) {
                Some((base, VariantKind::Checked)) => base,
                _ => name,
            };
            plan(base).pin
        };
        if !kernels.iter().any(|k| plan(&k.name).pin) {
            return Ok(user);
        }
        let attr = format!("__attribute__((intel_reqd_sub_group_size({size}))) ");
        let edits = (self.kernels(&user)?.iter())
            .filter(|k| pinned(&k.name))
            .map(|k| (k.decl_start, k.decl_start, attr.clone()))
            .collect();
        Ok(apply_edits(&user, edits))
    }

    /// `user` with the checked variants `plan` asks for (see [`checked::with_checked_variants`]),
    /// written from the scan that finds its kernels.
    fn with_checked(&self, user: String, plan: &impl Fn(&str) -> Rewrites) -> Result<String> {
        // The kernels checked, and the names of those checked and of those rounded too.
        let select = |kernels: &[KernelDecl]| {
            let to_check: Vec<KernelDecl> = (kernels.iter())
                .filter(|k| plan(&k.name).check)
                .cloned()
                .collect();
            let names = |round: bool| {
                let chosen = to_check.iter().filter(|k| !round || plan(&k.name).round);
                chosen.map(|k| k.name.clone()).collect::<Vec<_>>()
            };
            let names = (names(false), names(true));
            (to_check, names)
        };
        let known = self.memo.borrow().kernels.get(&user).cloned();
        if let Some(kernels) = known {
            let (to_check, (checked, round)) = select(&kernels?);
            if to_check.is_empty() {
                return Ok(user);
            }
            let key = (user, checked, round);
            if let Some(out) = self.memo.borrow().checked.get(&key) {
                return Ok(out.clone());
            }
            // Another choice of kernels than the memo's (not in the builds' fallbacks).
            let out = self.with_scan(&key.0, |s| {
                checked::with_checked_variants_on(s, &to_check, &key.2)
            })?;
            self.memo.borrow_mut().checked.insert(key, out.clone());
            return Ok(out);
        }
        let written = self.with_scan(&user, |s| {
            let kernels = s.kernel_decls();
            let mut memo = self.memo.borrow_mut();
            memo.kernels.insert(user.clone(), kernels.clone());
            let (to_check, (checked, round)) = select(&kernels?);
            if to_check.is_empty() {
                return Ok(None);
            }
            let out = checked::with_checked_variants_on(s, &to_check, &round)?;
            memo.checked
                .insert((user.clone(), checked, round), out.clone());
            Ok(Some(out))
        });
        self.failed(&user, &written);
        Ok(written?.unwrap_or(user))
    }

    /// The kernel definitions of `text` ([`Scanned::kernel_decls`]), scanned once a build.
    fn kernels(&self, text: &str) -> Result<Vec<KernelDecl>> {
        if let Some(kernels) = self.memo.borrow().kernels.get(text) {
            return kernels.clone();
        }
        let kernels = self.with_scan(text, |s| s.kernel_decls());
        let mut memo = self.memo.borrow_mut();
        memo.kernels.insert(text.to_string(), kernels.clone());
        kernels
    }

    /// Remembers that `text` does not scan, where `result` says so and nothing was remembered.
    fn failed<R>(&self, text: &str, result: &Result<R>) {
        if let Err(e) = result {
            let mut memo = self.memo.borrow_mut();
            let entry = memo.kernels.entry(text.to_string());
            entry.or_insert_with(|| Err(e.clone()));
        }
    }

    /// `f` of `text`'s scan: the source's own for the source, a new one for other texts.
    fn with_scan<R>(&self, text: &str, f: impl FnOnce(&Scanned<'_>) -> Result<R>) -> Result<R> {
        match (text == self.text, &self.scanned) {
            (true, Ok(s)) => f(s),
            (true, Err(e)) => Err(e.clone()),
            (false, _) => f(&Scanned::new(text)?),
        }
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
