//! Counts of launches and checks, and what failed (the first 40 messages; later failures are
//! counted with an empty message), for the tables that check many cases before asserting.

#[derive(Default)]
pub struct Tally {
    pub launches: usize,
    pub checks: usize,
    pub failures: Vec<String>,
}

impl Tally {
    /// Counts one check; keeps `what` when it failed.
    pub fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok && self.failures.len() < 40 {
            self.failures.push(what());
        } else if !ok {
            self.failures.push(String::new());
        }
    }
}
